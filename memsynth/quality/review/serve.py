"""What `memsynth review` hands `streamlit run`: the review app behind a check of the `Host`
header.

A web page on any site can resolve its own name to 127.0.0.1 (DNS rebinding) and then talk to
the app as if it were the same site: read the items, record judgments. Its requests carry its
own name as the Host, so the app answers, over HTTP and over its websocket, only requests
whose Host is a name of the address it serves.
"""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from streamlit.starlette import App

from memsynth.quality.review.hosts import configured_hosts
from memsynth.quality.review.items import APP

app = App(str(APP), middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=configured_hosts(), www_redirect=False)])
