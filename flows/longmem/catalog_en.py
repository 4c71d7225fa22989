"""English attributes a persona may have, as data: what the fact is, how a question asks for
it (never in the words the evidence uses), the task its evidence chat is about, and the terms
that name it (a filler session must use none of them).

Kinds: user (single-session-user), assistant (single-session-assistant), preference
(single-session-preference), count (multi-session: items across sessions), update
(knowledge-update: an old value, then a new one), temporal (two dated events).
"""

ATTRIBUTES = [
    {"key": "dog_breed", "kind": "user", "attribute": "the breed of the user's dog",
     "question": "What breed is my dog?", "topic": "choosing a dog food that suits a sensitive stomach",
     "statement": "The user's dog is a {value}.", "terms": ["dog", "puppy", "breed"],
     "values": ["beagle", "border collie", "dachshund", "shiba inu", "whippet", "cocker spaniel"]},
    {"key": "commute", "kind": "user", "attribute": "how the user gets to work",
     "question": "How do I usually get to work?", "topic": "planning a morning routine with a tight schedule",
     "statement": "The user commutes to work by {value}.", "terms": ["commute", "work trip"],
     "values": ["folding bike", "ferry", "tram", "motor scooter", "carpool van"]},
    {"key": "degree", "kind": "user", "attribute": "what the user studied at university",
     "question": "What did I major in?", "topic": "rewriting a CV summary for a job application",
     "statement": "The user studied {value} at university.", "terms": ["major", "degree", "university"],
     "values": ["marine biology", "civil engineering", "art history", "statistics", "linguistics"]},
    {"key": "book_rec", "kind": "assistant", "attribute": "the novel the assistant recommended",
     "question": "Which novel did you recommend to me for my flight?", "topic": "finding something to read on a long flight",
     "statement": "The assistant recommended the novel '{value}'.", "terms": ["novel", "recommend"],
     "values": ["The Salt Road", "A Winter Orchard", "Glass Harbour", "The Lantern Keeper", "Northern Lights Street"]},
    {"key": "stretch", "kind": "assistant", "attribute": "the stretch the assistant suggested for back pain",
     "question": "What stretch did you suggest for my back?", "topic": "easing stiffness after long days at a desk",
     "statement": "The assistant suggested the {value} stretch.", "terms": ["stretch", "back pain"],
     "values": ["cat-cow", "child's pose", "knee-to-chest", "seated twist", "cobra"]},
    {"key": "diet", "kind": "preference", "attribute": "the user's food preference",
     "question": "Can you suggest a dinner I could cook tonight?", "topic": "planning meals for a busy week",
     "statement": "The user prefers {value}.", "terms": ["dinner", "cook", "meal"],
     "rubric": "The user would prefer dinner ideas that fit their preference for {value}; generic suggestions that ignore it are not what they want.",
     "values": ["plant-based dishes with lots of legumes", "spicy Sichuan-style food", "quick one-pan meals",
                "Mediterranean dishes with fish"]},
    {"key": "travel_style", "kind": "preference", "attribute": "the user's travel preference",
     "question": "Any ideas for a weekend getaway?", "topic": "comparing options for a short holiday",
     "statement": "The user prefers {value}.", "terms": ["getaway", "holiday", "trip"],
     "rubric": "The user would prefer getaway ideas built around {value}; suggestions that ignore it are not what they want.",
     "values": ["quiet hiking trips away from crowds", "city breaks with museums", "train journeys rather than flights",
                "camping by a lake"]},
    {"key": "plants", "kind": "count", "attribute": "the houseplants the user bought",
     "question": "How many different houseplants have I bought?", "topic": "looking after a new houseplant",
     "statement": "The user bought a {value}.", "terms": ["houseplant", "plant"],
     "values": ["monstera", "snake plant", "peace lily", "fiddle-leaf fig", "pothos", "spider plant"]},
    {"key": "races", "kind": "count", "attribute": "the races the user ran",
     "question": "How many races have I run?", "topic": "recovering well after a run",
     "statement": "The user ran the {value}.", "terms": ["race", "run"],
     "values": ["harbour 10k", "city half marathon", "park 5k", "trail 15k", "night relay"]},
    {"key": "phone", "kind": "update", "attribute": "the user's phone",
     "question": "What phone do I have now?", "topic": "sorting out backups and storage on a phone",
     "statement": "The user's phone is a {value}.", "terms": ["phone", "smartphone"],
     "values": ["Pixel 6", "iPhone 12", "Galaxy S21", "Fairphone 4", "Moto G"]},
    {"key": "gym", "kind": "update", "attribute": "how often the user goes to the gym",
     "question": "How many times a week do I go to the gym?", "topic": "building a workout plan",
     "statement": "The user goes to the gym {value}.", "terms": ["gym", "workout"],
     "values": ["twice a week", "three times a week", "four times a week", "once a week", "five times a week"]},
    {"key": "trip_concert", "kind": "temporal", "attribute": "the user's museum visit and concert",
     "events": ["visited the maritime museum", "went to a jazz concert"],
     "question": "How many days passed between my museum visit and the jazz concert?",
     "topic": "writing a short journal entry about the day", "terms": ["museum", "concert", "jazz"],
     "statement": "The user {value}."},
    {"key": "bike_hike", "kind": "temporal", "attribute": "the user's bike purchase and first hike",
     "events": ["bought a second-hand road bike", "did a first mountain hike"],
     "question": "How many days passed between buying my road bike and my first mountain hike?",
     "topic": "planning what gear to keep in the car", "terms": ["bike", "hike", "mountain"],
     "statement": "The user {value}."},
]

# What a persona never had: a question an abstaining system must decline.
ABSENT = [
    {"key": "cat_name", "attribute": "the name of the user's cat", "question": "What is my cat's name?",
     "terms": ["cat", "kitten"]},
    {"key": "boat", "attribute": "the user's sailing boat", "question": "What kind of sailboat do I own?",
     "terms": ["sailboat", "sailing", "yacht"]},
    {"key": "violin", "attribute": "the user's violin teacher", "question": "What is my violin teacher called?",
     "terms": ["violin"]},
]

ABSTAIN = "The user never mentioned {attribute}; the question cannot be answered from the chat history."

# Filler chats: everyday tasks far from every attribute above.
FILLER_TOPICS = [
    "converting a cake recipe to metric units", "writing a polite email to a landlord", "explaining compound interest",
    "naming a small online shop", "fixing a spreadsheet formula", "learning basic chess openings",
    "understanding how tides work", "drafting a birthday card message", "organising a shared calendar",
    "comparing two laptop screen sizes", "summarising a news article about solar energy",
    "practising a job interview answer", "choosing paint colours for a hallway", "planning a board game evening",
    "learning to fold paper cranes", "writing a haiku about autumn", "understanding a water bill",
    "setting up a password manager", "translating a menu phrase", "planning a school bake sale",
]
