"""The warehouse: one DuckLake catalog per dataset, one snapshot per published version."""
