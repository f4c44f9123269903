"""The domains agent traces are written in: each a world of records (random ids, amounts, dates) and the story of
a user's errands through its tools. turnstream/samples/agent_traces.py runs them."""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from turnstream.samples.agent_policies import policy
from turnstream.text.language import Language

if TYPE_CHECKING:
    from turnstream.samples.agent_traces import Log

T = TypeVar("T")

FIRST = ("Sofia", "Yusuf", "Mei", "Lucas", "Amara", "Noah", "Ivan", "Chen", "Aisha", "Mateo", "Olivia", "Raj")
LAST = ("Kim", "Hernandez", "Okafor", "Rossi", "Nguyen", "Schmidt", "Patel", "Silva", "Moreau", "Ito", "Brown")
STREETS = ("Maple Drive", "Elm Street", "Lakeview Avenue", "Hillcrest Road", "Cedar Lane", "Park Place")
CITIES = (("Denver", "CO", "80202"), ("Austin", "TX", "73301"), ("Seattle", "WA", "98101"), ("Boston", "MA", "02108"))


def pick(rng: random.Random, *options: T) -> T:
    return rng.choice(options)


def code(rng: random.Random, length: int = 6) -> str:
    """A record locator: upper-case letters and digits, as `KX4Q2P`."""
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(length))


def digits(rng: random.Random, length: int) -> str:
    return str(rng.randint(10 ** (length - 1), 10**length - 1))


def money(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def day(start: date, offset: int) -> str:
    return (start + timedelta(days=offset)).isoformat()


def chatter(log: Log, rng: random.Random, pool: Sequence[tuple[str, str]], low: int = 1, high: int = 3) -> None:
    """Some of the user's questions and the agent's answers between two steps."""
    log.chat(rng.sample(list(pool), min(len(pool), rng.randint(low, high))))


def person(rng: random.Random) -> dict[str, Any]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    city, state, zip_code = rng.choice(CITIES)
    return {
        "first": first,
        "last": last,
        "user_id": f"{first.lower()}_{last.lower()}_{digits(rng, 4)}",
        "email": f"{first.lower()}.{last.lower()}{digits(rng, 3)}@example.com",
        "dob": f"{rng.randint(1958, 2001)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "address": {
            "address1": f"{rng.randint(10, 999)} {rng.choice(STREETS)}",
            "address2": f"Suite {rng.randint(100, 999)}",
            "city": city,
            "state": state,
            "country": "USA",
            "zip": zip_code,
        },
    }


def payment_methods(rng: random.Random, card_prefix: str, voucher_prefix: str) -> dict[str, dict[str, Any]]:
    """A profile's payment methods by id: two cards and a stored-value one, as `card_9920117`, `voucher_5518230`."""
    methods: dict[str, dict[str, Any]] = {}
    for brand in rng.sample(["visa", "mastercard", "amex"], 2):
        methods[f"{card_prefix}_{digits(rng, 7)}"] = {
            "source": "credit_card",
            "brand": brand,
            "last_four": digits(rng, 4),
        }
    methods[f"{voucher_prefix}_{digits(rng, 7)}"] = {
        "source": voucher_prefix,
        "balance": rng.choice([40, 75, 120, 200, 250]),
    }
    for method_id, method in methods.items():
        method["id"] = method_id
    return methods


def card_words(method: dict[str, Any]) -> str:
    """How a user names a card: by brand and last four, never by id."""
    return f"{method['brand'].title()} ending in {method['last_four']}"


def table_row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


# ---------------------------------------------------------------- travel (English): airline and hotel

AIRPORTS = (
    ("JFK", "New York"),
    ("SFO", "San Francisco"),
    ("ORD", "Chicago"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("BOS", "Boston"),
    ("MIA", "Miami"),
    ("LAX", "Los Angeles"),
    ("ATL", "Atlanta"),
    ("PHX", "Phoenix"),
)
DISTRICTS = {
    "New York": ("Midtown", "SoHo", "Financial District"),
    "San Francisco": ("Union Square", "Nob Hill", "Mission Bay"),
    "Chicago": ("The Loop", "River North", "Lincoln Park"),
    "Denver": ("LoDo", "Cherry Creek", "Capitol Hill"),
    "Seattle": ("Belltown", "Pioneer Square", "South Lake Union"),
    "Boston": ("Back Bay", "Seaport", "Beacon Hill"),
    "Miami": ("Brickell", "South Beach", "Coconut Grove"),
    "Los Angeles": ("Santa Monica", "Downtown", "West Hollywood"),
    "Atlanta": ("Midtown", "Buckhead", "Old Fourth Ward"),
    "Phoenix": ("Downtown", "Arcadia", "Camelback East"),
}
HOTEL_NAMES = ("Harbor Inn", "The Meridian", "Parkside Suites", "Hotel Lumen", "Grand Central Lodge", "The Alder")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")
_AIRLINE = ("HAT", "DLX", "SKW")

TRAVEL_CHATTER = (
    (
        "How many bags can I check for free on that one?",
        "As a {tier} member in economy you get {free} free checked bags per passenger; each extra bag is $50.",
    ),
    (
        "Is travel insurance worth it for this trip?",
        "I can't make a recommendation, but insurance is $30 per passenger "
        "and allows a full refund if you cancel for health or weather reasons.",
    ),
    (
        "What happens if the airline cancels my flight?",
        "If the airline cancels, the reservation can be cancelled with a "
        "full refund to the original payment methods within 5 to 7 business days.",
    ),
    (
        "Can I pick my seat now?",
        "Seat selection isn't something I can do here; you can choose seats in the app once the change is confirmed.",
    ),
    (
        "Do you know if there's wifi on board?",
        "I don't have onboard amenity details in my tools, sorry. The flight "
        "details I can see are times, seats and prices.",
    ),
    (
        "Remind me, what time does the return leg leave?",
        "The return segment on your reservation leaves at {time} local time; "
        "it stays as it is unless you ask me to change it.",
    ),
    (
        "My colleague might join. Could we add her later?",
        "Passengers can't be added to an existing reservation, but she could "
        "book her own on the same flights while seats are available.",
    ),
    (
        "Will I get miles for this change?",
        "I can't see loyalty accruals in my tools. The change itself does not affect your {tier} status.",
    ),
    (
        "Is the price locked if I decide tomorrow?",
        "No, prices are live and may change; I can only hold a price by booking it now.",
    ),
    (
        "Sorry, the kids are shouting here. What did you say about the fare difference?",
        "No problem. The fare difference for the new flight is ${diff} for the whole reservation.",
    ),
    (
        "Can I use two gift cards on one booking?",
        "Yes, up to three gift cards may be used on one reservation, together "
        "with at most one credit card and one certificate.",
    ),
    (
        "Ok, and the hotel would be close to the venue?",
        "I can search hotels by district once we're done with the flights, "
        "and show the rating and nightly price of each.",
    ),
)


def _flight(rng: random.Random, origin: str, destination: str, on: str) -> dict[str, Any]:
    dep = rng.randint(5, 21)
    arr = (dep + rng.randint(2, 6)) % 24
    economy = rng.randint(110, 420)
    return {
        "flight_number": f"{rng.choice(_AIRLINE)}{digits(rng, 3)}",
        "origin": origin,
        "destination": destination,
        "status": "available",
        "scheduled_departure_time_est": f"{dep:02d}:{rng.choice(['00', '15', '30', '45'])}:00",
        "scheduled_arrival_time_est": f"{arr:02d}:{rng.choice(['05', '20', '40', '50'])}:00",
        "date": on,
        "available_seats": {
            "basic_economy": rng.randint(0, 18),
            "economy": rng.randint(2, 20),
            "business": rng.randint(0, 9),
        },
        "prices": {
            "basic_economy": economy - rng.randint(30, 60),
            "economy": economy,
            "business": economy * 3 + rng.randint(0, 90),
        },
    }


def _reservation(rng: random.Random, user: dict[str, Any], methods: dict[str, Any], start: date) -> dict[str, Any]:
    (origin, _), (destination, city) = rng.sample(AIRPORTS, 2)
    out_day = rng.randint(5, 60)
    flights = [
        _flight(rng, origin, destination, day(start, out_day)),
        _flight(rng, destination, origin, day(start, out_day + rng.randint(2, 9))),
    ]
    cabin = pick(rng, "economy", "economy", "basic_economy", "business")
    card = next(iter(methods))
    total = sum(f["prices"][cabin] for f in flights)
    return {
        "reservation_id": code(rng),
        "user_id": user["user_id"],
        "origin": origin,
        "destination": destination,
        "city": city,
        "flight_type": "round_trip",
        "cabin": cabin,
        "flights": [
            {k: f[k] for k in ("flight_number", "origin", "destination", "date")} | {"price": f["prices"][cabin]}
            for f in flights
        ],
        "passengers": [{"first_name": user["first"], "last_name": user["last"], "dob": user["dob"]}],
        "payment_history": [{"payment_id": card, "amount": total}],
        "created_at": f"{day(start, -rng.randint(3, 40))}T{rng.randint(6, 22):02d}:{rng.randint(0, 59):02d}:11",
        "total_baggages": rng.randint(0, 2),
        "nonfree_baggages": 0,
        "insurance": pick(rng, "yes", "no"),
        "status": None,
    }


def _public(reservation: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in reservation.items() if k != "city"}


def travel_en(log: Log, rng: random.Random, language: Language) -> None:
    start = date(2024, rng.randint(4, 9), rng.randint(1, 28))
    user = person(rng)
    methods = payment_methods(rng, pick(rng, "card", "credit_card"), pick(rng, "voucher", "gift_card"))
    tier = pick(rng, "regular", "silver", "gold")
    reservations = [_reservation(rng, user, methods, start) for _ in range(rng.randint(3, 5))]
    profile = {
        "user_id": user["user_id"],
        "name": {"first_name": user["first"], "last_name": user["last"]},
        "address": user["address"],
        "email": user["email"],
        "dob": user["dob"],
        "payment_methods": methods,
        "saved_passengers": [
            {
                "first_name": rng.choice(FIRST),
                "last_name": user["last"],
                "dob": f"{rng.randint(1960, 2015)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
            }
        ],
        "membership": tier,
        "reservations": [r["reservation_id"] for r in reservations],
    }
    fare_row = lambda r: table_row(  # noqa: E731 - one row of the fare reference table
        f"{rng.choice(AIRPORTS)[0]}–{rng.choice(AIRPORTS)[0]}",
        pick(r, "basic_economy", "economy", "business"),
        f"${r.randint(90, 900)}",
        pick(r, "changeable", "non-changeable", "changeable for $75"),
        f"{r.randint(0, 3)} bags",
    )
    log.system(
        policy("travel", "en", rng, "## Fare reference (route, cabin, typical fare, change rule, bags)", fare_row)
    )
    log.user(
        pick(
            rng,
            "Hi, I need some help with my trips.",
            "Hello! I want to change a flight and maybe book a hotel.",
            "hey, can you help me sort out an upcoming trip?",
        )
    )
    log.say(
        pick(
            rng,
            "Sure, I can help. Could you give me your user id?",
            "Of course! To get started, please share your user id.",
            "Happy to help. What's your user id?",
        )
    )
    log.user(
        pick(
            rng,
            f"It's {user['user_id']}.",
            f"user id is {user['user_id']}",
            f"Sure: {user['user_id']}. I'm {user['first']}.",
        )
    )
    log.call(("get_user_details", {"user_id": user["user_id"]}, profile))
    count = len(reservations)
    log.say(
        f"Thanks, {user['first']}. I can see {count} reservations on your "
        "profile. Which trip would you like to work on?"
    )
    target, other = rng.sample(reservations, 2)
    month = MONTHS[int(target["flights"][0]["date"][5:7]) - 1]
    log.user(
        pick(
            rng,
            f"The one to {target['city']} in {month}.",
            f"My {target['city']} trip, the {month} one. I need to leave later.",
            f"I'd like to move my flight to {target['city']}.",
        )
    )
    shown = rng.sample([r for r in reservations if r is not target], min(2, count - 1)) + [target]
    rng.shuffle(shown)
    log.call(
        *(("get_reservation_details", {"reservation_id": r["reservation_id"]}, _public(r)) for r in shown),
        thought=pick(rng, None, "Let me pull up your reservations."),
    )
    names_code = rng.random() < 0.5
    log.say(
        f"Found it: reservation {target['reservation_id']}, {target['origin']} "
        f"to {target['destination']} on {target['flights'][0]['date']}, {target['cabin'].replace('_', ' ')}."
        if names_code
        else (
            f"Found your {target['city']} trip: outbound {target['flights'][0]['date']}, "
            f"returning {target['flights'][1]['date']}, {target['cabin'].replace('_', ' ')} "
            "cabin. What would you like to change?"
        )
    )
    diff = rng.randint(20, 160)
    fill = {
        "tier": tier,
        "free": {"regular": 1, "silver": 2, "gold": 3}[tier],
        "time": f"{rng.randint(6, 20)}:{rng.choice(['05', '30', '45'])}",
        "diff": diff,
    }
    pool = [(q, a.format(**fill)) for q, a in TRAVEL_CHATTER]
    chatter(log, rng, pool, 1, 4)
    new_day = day(date.fromisoformat(target["flights"][0]["date"]), rng.randint(1, 3))
    log.user(
        pick(
            rng,
            f"Can I fly out on {new_day} instead?",
            f"I need to leave on {new_day}, any flights that day?",
            f"Move the outbound to {new_day} please, something in the afternoon if possible.",
        )
    )
    options = sorted(
        (_flight(rng, target["origin"], target["destination"], new_day) for _ in range(rng.randint(3, 6))),
        key=lambda f: f["scheduled_departure_time_est"],
    )
    log.call(
        (
            "search_direct_flight",
            {"origin": target["origin"], "destination": target["destination"], "date": new_day},
            options,
        )
    )
    listing = "\n".join(
        f"- departs {f['scheduled_departure_time_est'][:5]}, arrives {f['scheduled_arrival_time_est'][:5]}, "
        f"economy ${f['prices']['economy']}, business ${f['prices']['business']}"
        for f in options
    )
    log.say(f"There are {len(options)} direct flights on {new_day}:\n{listing}\nWhich one works for you?")
    chosen = options[-1] if rng.random() < 0.5 else min(options, key=lambda f: f["prices"]["economy"])
    later = day(date.fromisoformat(new_day), 1)
    log.user(pick(rng, f"Hmm, and what about {later}?", f"Before I decide, what does {later} look like?"))
    alternatives = [_flight(rng, target["origin"], target["destination"], later) for _ in range(rng.randint(2, 5))]
    # the agent first names the city, as models do, and the tool wants its airport code
    log.call(
        (
            "search_direct_flight",
            {"origin": target["origin"], "destination": target["city"], "date": later},
            f"Error: unknown airport code '{target['city']}'",
        )
    )
    log.call(
        (
            "search_direct_flight",
            {"origin": target["origin"], "destination": target["destination"], "date": later},
            alternatives,
        ),
        retry=True,
    )
    log.say(
        f"On {later} there are {len(alternatives)} flights, economy from "
        f"${min(f['prices']['economy'] for f in alternatives)} "
        f"to ${max(f['prices']['economy'] for f in alternatives)}."
    )
    chatter(log, rng, pool, 0, 2)
    which = (
        "cheapest one"
        if chosen is not options[-1]
        else f"latest one, leaving at {chosen['scheduled_departure_time_est'][:5]}"
    )
    log.user(f"No, back to {new_day}: the {which} is fine. Keep the return as it is.")
    log.say(pick(rng, "Got it.", "Sure, noted.", "Okay."))
    chatter(log, rng, pool, 0, 2)
    cards = [m for m in methods.values() if m["source"] == "credit_card"]
    stored = next(m for m in methods.values() if m["source"] != "credit_card")
    card = rng.choice(cards)
    log.say(
        f"To confirm: reservation {target['reservation_id']}, new outbound "
        f"{chosen['flight_number']} on {new_day}, return unchanged, cabin "
        f"{target['cabin'].replace('_', ' ')}. How would you like to pay the difference?"
    )
    log.user(
        pick(
            rng,
            f"Use the {stored['source'].replace('_', ' ')} first.",
            f"Put it on my {stored['source'].replace('_', ' ')}, yes go ahead.",
        )
    )
    flights = [
        {"flight_number": chosen["flight_number"], "date": new_day},
        {"flight_number": target["flights"][1]["flight_number"], "date": target["flights"][1]["date"]},
    ]
    args = {
        "reservation_id": target["reservation_id"],
        "cabin": target["cabin"],
        "flights": flights,
        "payment_id": stored["id"],
    }
    target["flights"][0] = {k: chosen[k] for k in ("flight_number", "origin", "destination", "date")} | {
        "price": chosen["prices"][target["cabin"]]
    }
    if stored["balance"] < diff:
        log.call(("update_reservation_flights", args, f"Error: {stored['source']} balance is not enough"))
        log.say(
            f"The {stored['source'].replace('_', ' ')} only has ${stored['balance']} on it, which doesn't cover "
            f"${diff}. Would you like to use a card instead?"
        )
        log.user(f"Ugh. Ok, use my {card_words(card)}.")
        args = {**args, "payment_id": card["id"]}
    target["payment_history"].append({"payment_id": args["payment_id"], "amount": diff})
    log.call(("update_reservation_flights", args, _public(target)), retry=stored["balance"] < diff)
    log.say(f"Done. Your outbound is now {chosen['flight_number']} on {new_day}; ${diff} was charged.")
    chatter(log, rng, pool, 1, 3)
    bags = rng.randint(1, 3)
    log.user(
        pick(rng, f"Actually I'll bring {bags + 1} checked bags.", f"Can you add bags? We'll have {bags + 1} in total.")
    )
    log.call(
        ("get_reservation_details", {"reservation_id": target["reservation_id"]}, _public(target)),
        thought=pick(rng, None, "Checking the current baggage on the reservation."),
    )
    target["total_baggages"], target["nonfree_baggages"] = bags + 1, 1
    log.say(f"That adds one paid bag at $50. Charge the {card_words(card)} again?")
    log.user("Yes.")
    log.call(
        (
            "update_reservation_baggages",
            {
                "reservation_id": target["reservation_id"],
                "total_baggages": bags + 1,
                "nonfree_baggages": 1,
                "payment_id": card["id"],
            },
            _public(target),
        )
    )
    log.say("Your bags are updated.")
    chatter(log, rng, pool, 1, 3)
    companion = profile["saved_passengers"][0]
    log.user(
        f"My {pick(rng, 'son', 'daughter', 'partner')} {companion['first_name']} wants to come on the same flights. "
        "Can you book a ticket for them? Their details are saved on my profile."
    )
    price = chosen["prices"]["economy"] + target["flights"][1]["price"]
    log.say(
        f"I'll book {companion['first_name']} {companion['last_name']} on {chosen['flight_number']} ({new_day}) and "
        f"{target['flights'][1]['flight_number']} ({target['flights'][1]['date']}), economy, ${price}. "
        "Which payment method, and would you like insurance at $30?"
    )
    log.user(pick(rng, "Same card, no insurance.", f"The {card_words(card)}. No insurance."))
    new_id = code(rng)
    log.call(
        (
            "book_reservation",
            {
                "user_id": user["user_id"],
                "origin": target["origin"],
                "destination": target["destination"],
                "flight_type": "round_trip",
                "cabin": "economy",
                "flights": flights,
                "passengers": [companion],
                "payment_methods": [{"payment_id": card["id"], "amount": price}],
                "total_baggages": 0,
                "nonfree_baggages": 0,
                "insurance": "no",
            },
            {
                "reservation_id": new_id,
                "status": "confirmed",
                "flights": flights,
                "passengers": [companion],
                "payment_history": [{"payment_id": card["id"], "amount": price}],
            },
        )
    )
    log.say(f"Booked: reservation {new_id} for {companion['first_name']}.")
    # hotel
    city = target["city"]
    check_in, check_out = new_day, target["flights"][1]["date"]
    log.user(
        pick(
            rng,
            f"Now a hotel in {city} for those nights.",
            f"Great. I also need a hotel in {city} from {check_in} to {check_out}.",
        )
    )
    hotels: list[dict[str, Any]] = []
    for district in DISTRICTS[city]:
        prefix = target["destination"]
        hotels.append(
            {
                "hotel_id": f"{prefix}-{digits(rng, 5)}",
                "name": f"{rng.choice(HOTEL_NAMES)} {district}",
                "district": district,
                "rating": round(rng.uniform(3.6, 4.9), 1),
                "price_per_night": {"amount": rng.randint(129, 389), "currency": "USD"},
                "rooms": [
                    {
                        "room_type": kind,
                        "rate_code": f"{kind[:3].upper()}-{code(rng, 4)}",
                        "refundable": refundable,
                        "total": {"amount": rng.randint(300, 1500), "currency": "USD"},
                    }
                    for kind, refundable in (("king", True), ("king", False), ("double queen", True))
                ],
            }
        )
    log.call(
        (
            "search_hotels",
            {"city": city, "check_in": check_in, "check_out": check_out, "guests": 1},
            {"city": city, "results": hotels, "currency": "USD"},
        )
    )
    log.say(
        "\n".join(
            [f"I found {len(hotels)} hotels:"]
            + [
                f"- {h['name']} in {h['district']}, rated {h['rating']}, from ${h['price_per_night']['amount']}/night"
                for h in hotels
            ]
        )
    )
    chatter(log, rng, pool, 1, 4)
    stay = rng.choice(hotels)
    room = stay["rooms"][0]
    log.user(
        pick(
            rng,
            f"Let's do the one in {stay['district']}, a refundable king room.",
            f"The {stay['district']} one. King bed, refundable please.",
        )
    )
    log.say(
        f"Booking {stay['name']}, refundable king room, {check_in} to {check_out}, "
        f"total ${room['total']['amount']}. Pay with the {card_words(card)}?"
    )
    log.user(pick(rng, "Yes please.", "yes", "Go ahead."))
    booking = {
        "booking_id": f"HB{digits(rng, 8)}",
        "hotel_id": stay["hotel_id"],
        "rate_code": room["rate_code"],
        "status": "confirmed",
        "check_in": check_in,
        "check_out": check_out,
        "charged": {"amount": room["total"]["amount"], "currency": "USD", "payment_id": card["id"]},
    }
    log.call(
        (
            "book_hotel",
            {
                "hotel_id": stay["hotel_id"],
                "rate_code": room["rate_code"],
                "check_in": check_in,
                "check_out": check_out,
                "guests": [{"first_name": user["first"], "last_name": user["last"]}],
                "payment_id": card["id"],
            },
            booking,
        )
    )
    log.say(f"Your stay is confirmed, booking {booking['booking_id']}.")
    chatter(log, rng, pool, 2, 4)
    # cancel the other trip, named by where it goes
    log.user(
        pick(
            rng,
            f"One more thing: cancel my trip to {other['city']}, plans changed.",
            f"And I won't make it to {other['city']} after all. Cancel that one.",
        )
    )
    if other not in shown:
        log.call(("get_reservation_details", {"reservation_id": other["reservation_id"]}, _public(other)))
    can_cancel = other["cabin"] == "business" or other["insurance"] == "yes"
    if can_cancel:
        log.say(
            f"Reservation {other['reservation_id']} can be cancelled and refunded to the original payment. Confirm?"
        )
        log.user("Confirm.")
        other["status"] = "cancelled"
        log.call(("cancel_reservation", {"reservation_id": other["reservation_id"]}, _public(other)))
        log.say("It's cancelled; the refund takes 5 to 7 business days.")
    else:
        log.say(
            "That one is economy without insurance, so it can't be refunded "
            "by policy, only cancelled within 24 hours of booking. Do you still want to try?"
        )
        log.user("Try anyway.")
        log.call(
            (
                "cancel_reservation",
                {"reservation_id": other["reservation_id"]},
                {"error": "reservation cannot be cancelled: economy without insurance, booked more than 24 hours ago"},
            )
        )
        log.say(
            "As expected the system refused: no insurance and booked more "
            "than 24 hours ago. I can transfer you to a human agent if you'd like."
        )
        log.user("No, leave it.")
    log.user(
        pick(rng, "Can you show me where all my reservations stand now?", "What's the status of all my bookings now?")
    )
    log.call(
        *(("get_reservation_details", {"reservation_id": r["reservation_id"]}, _public(r)) for r in reservations),
        thought=pick(rng, None, "Reading each reservation again."),
    )
    log.say(
        "\n".join(
            f"- {r['reservation_id']}: {r['origin']}→{r['destination']} {r['flights'][0]['date']}, "
            f"{r['status'] or 'active'}"
            for r in reservations
        )
    )
    log.user(pick(rng, "Can you recap everything?", "Thanks! Quick summary please?"))
    log.say(
        f"Summary: reservation {target['reservation_id']} now departs on "
        f"{chosen['flight_number']} ({new_day}) with {bags + 1} checked bags; "
        f"hotel booking {booking['booking_id']} at {stay['name']}; charges on your {card_words(card)}."
    )


# ---------------------------------------------------------------- travel (Chinese): the Tokyo and Seoul trip

ZH_NAMES = ("张伟", "李娜", "王芳", "刘洋", "陈静", "杨帆", "赵磊", "周婷", "吴昊", "孙悦")
ZH_RESTAURANT_QUESTIONS = (
    ("{area}附近有什么好吃的拉面？", "拉面"),
    ("有没有适合晚上去的烤肉店？", "烤肉"),
    ("想吃寿司，但我海鲜过敏，有没有办法？", "寿司"),
    ("早餐一般在哪里解决比较方便？", "早餐"),
    ("有没有米其林推荐的店，不要太贵的？", "米其林"),
    ("附近有素食餐厅吗？我朋友最近在减肥。", "素食"),
    ("天妇罗是不是都带虾？", "天妇罗"),
    ("想找一家能看夜景的餐厅。", "夜景"),
    ("居酒屋一般人均多少钱？", "居酒屋"),
    ("甜品店有推荐吗？", "甜品"),
    ("去那边需要提前预约吗？", "预约"),
    ("有没有中文菜单的店？", "中文菜单"),
    ("便利店的饭团能吃吗，会不会有鱼？", "便利店"),
    ("当地人常去的定食店在哪？", "定食"),
)
ZH_CHATTER = (
    ("那边六月会不会下雨？", "六月是东京的梅雨季，降雨概率比较高，建议带一把折叠伞，户外行程安排在上午。"),
    ("我们需要办签证吗？", "签证政策以官方信息为准，建议出发前在使领馆网站确认，我这边没法给出保证。"),
    ("机场到酒店怎么走比较方便？", "从成田机场可以坐京成Skyliner到上野，再换乘地铁银座线到浅草，全程大约一个小时。"),
    ("交通卡买哪种？", "可以买西瓜卡（Suica），地铁、公交和便利店都能用，首尔那边用T-money。"),
    ("预算还够吗？", "目前机票和酒店加起来还在预算之内，餐饮和交通按每人每天三四百元估算，应该够用。"),
    ("退房后行李可以寄存吗？", "大部分酒店都可以免费寄存行李到当天晚上，办理退房时跟前台说一下就行。"),
    ("换汇在哪里换划算？", "一般市区的换汇店汇率比机场好一些，也可以直接刷银联卡或者用手机支付。"),
)


def _zh_flight(rng: random.Random, number: str, origin: str, destination: str, on: str, price: int) -> dict[str, Any]:
    dep = rng.randint(7, 20)
    return {
        "flight_no": number,
        "airline": {
            "CA": "中国国际航空",
            "MU": "东方航空",
            "NH": "全日空",
            "KE": "大韩航空",
            "OZ": "韩亚航空",
            "JL": "日本航空",
            "7C": "济州航空",
        }[number[:2]],
        "origin": origin,
        "destination": destination,
        "date": on,
        "depart": f"{dep:02d}:{rng.choice(['05', '25', '40', '55'])}",
        "arrive": f"{(dep + rng.randint(2, 4)) % 24:02d}:{rng.choice(['10', '35', '50'])}",
        "cabin": "经济舱",
        "price": {"amount": price, "currency": "CNY", "per": "人"},
        "baggage": {"checked_kg": rng.choice([20, 23, 0]), "carry_on_kg": 7},
        "seats_left": rng.randint(2, 9),
    }


def _zh_hotel(rng: random.Random, hotel_id: str, name: str, area: str, check_in: str, check_out: str) -> dict[str, Any]:
    nightly = rng.randint(520, 1300)
    return {
        "hotel_id": hotel_id,
        "name": name,
        "area": area,
        "rating": round(rng.uniform(4.1, 4.8), 1),
        "rooms": [
            {
                "room_code": f"{kind}-{digits(rng, 3)}",
                "type": label,
                "breakfast": breakfast,
                "refundable": refundable,
                "price_per_night": {"amount": nightly + extra, "currency": "CNY"},
            }
            for kind, label, breakfast, refundable, extra in (
                ("DBL", "双床房", False, True, 0),
                ("KNG", "大床房", True, True, 120),
                ("KNG", "大床房（不可退）", True, False, 40),
            )
        ],
        "check_in": check_in,
        "check_out": check_out,
    }


def _zh_restaurants(rng: random.Random, city: str, area: str, topic: str) -> dict[str, Any]:
    prefix = "TYO" if city == "东京" else "SEL"
    currency = "JPY" if city == "东京" else "KRW"
    scale = 1 if currency == "JPY" else 9
    return {
        "area": area,
        "query": topic,
        "results": [
            {
                "restaurant_id": f"R-{prefix}-{digits(rng, 4)}",
                "name": area
                + rng.choice(["一番", "山田", "金子", "松屋", "花月", "明月", "小町"])
                + (topic if len(topic) <= 3 else "")
                + rng.choice(["本店", "二号店", "屋", "亭"]),
                "avg_price": {"amount": rng.randint(9, 60) * 100 * scale, "currency": currency},
                "walk_minutes": rng.randint(2, 15),
                "reservation_required": rng.random() < 0.4,
                "allergens": rng.sample(["海鲜", "花生", "麸质", "乳制品", "鸡蛋"], rng.randint(0, 2)),
            }
            for _ in range(rng.randint(2, 4))
        ],
    }


def travel_zh(log: Log, rng: random.Random, language: Language) -> None:
    start = date(2024, 6, rng.randint(3, 20))
    nights_tokyo, nights_seoul = rng.randint(3, 4), rng.randint(2, 3)
    arrive_seoul = day(start, nights_tokyo)
    home = day(start, nights_tokyo + nights_seoul)
    travellers = rng.sample(ZH_NAMES, 2)
    passports = [f"E{digits(rng, 8)}" for _ in travellers]
    budget = pick(rng, 20000, 20000, 18000, 25000)
    city_row = lambda r: table_row(  # noqa: E731 - one row of the city reference table
        pick(r, "东京", "首尔", "大阪", "京都", "釜山"),
        pick(r, "浅草", "新宿", "银座", "明洞", "弘大", "江南"),
        f"人均{r.randint(80, 400)}元",
        pick(r, "地铁方便", "步行可达", "建议打车", "公交直达"),
        f"{r.randint(5, 40)}分钟到主要景点",
    )
    log.system(policy("travel", "zh", rng, "## 城市参考（城市、区域、人均餐饮、交通、到景点时间）", city_row))
    log.user(
        pick(
            rng,
            f"我们两个人想去东京和首尔玩一周左右，总预算{budget}元。",
            f"帮我规划一下东京加首尔的行程，两个人，预算{budget}元以内。",
        )
    )
    log.say("好的！请问从哪个城市出发、哪天出发？回程是从首尔直接回来吗？")
    log.user(
        f"从北京出发，{start.month}月{start.day}号走，东京玩{nights_tokyo}晚，然后去首尔{nights_seoul}晚，从首尔回北京。"
    )
    flights = [
        _zh_flight(rng, "CA929", "PEK", "NRT", start.isoformat(), rng.randint(1650, 2100)),
        _zh_flight(rng, f"NH{digits(rng, 3)}", "PEK", "HND", start.isoformat(), rng.randint(2300, 3100)),
        _zh_flight(rng, f"JL{digits(rng, 3)}", "PEK", "NRT", start.isoformat(), rng.randint(2200, 2900)),
    ]
    rng.shuffle(flights)
    log.call(
        (
            "search_flights",
            {"origin": "PEK", "destination": "TYO", "date": start.isoformat(), "passengers": 2},
            {"flights": flights, "currency": "CNY"},
        ),
        thought=pick(rng, None, "我先查一下北京到东京的航班。"),
    )
    log.say(
        "\n".join(
            ["查到3个航班："]
            + [f"- {f['airline']} {f['depart']}起飞，{f['arrive']}到达，每人{f['price']['amount']}元" for f in flights]
        )
    )
    log.user(pick(rng, "选CA929吧，便宜一点。另外我对海鲜过敏。", "就要国航那班，便宜一点。对了，我对海鲜过敏。"))
    log.say(
        "好的，记下了：国航CA929，您对海鲜过敏，之后推荐餐厅时我会避开。请提供两位旅客的姓名和护照号，方便之后预订。"
    )
    log.user(f"{travellers[0]}，护照{passports[0]}；{travellers[1]}，护照{passports[1]}。")
    log.say("收到。接下来看东京的酒店？")
    tokyo_out = day(start, nights_tokyo)
    tokyo = [
        _zh_hotel(rng, "TYO-10477", "浅草雷门酒店", "浅草", start.isoformat(), tokyo_out),
        _zh_hotel(rng, f"TYO-{digits(rng, 5)}", "新宿华盛顿酒店", "新宿", start.isoformat(), tokyo_out),
    ]
    log.user("好，看看酒店，交通方便一点的。")
    log.call(
        (
            "search_hotels",
            {"city": "东京", "check_in": start.isoformat(), "check_out": tokyo_out, "guests": 2},
            {"hotels": tokyo},
        )
    )
    log.say(
        "\n".join(
            ["找到两家："]
            + [
                f"- {h['name']}（{h['area']}），评分{h['rating']}，每晚{h['rooms'][0]['price_per_night']['amount']}元起"
                for h in tokyo
            ]
        )
    )
    log.user(pick(rng, "就住浅草那家。", "浅草那家吧，离雷门近。"))
    log.say("好的，东京住浅草雷门酒店。要大床房还是双床房？")
    log.user(pick(rng, "双床房就行，不用早餐。", "双床房，早餐我们自己解决。"))
    log.say("明白，双床房、不含早餐。")
    questions = rng.sample(ZH_RESTAURANT_QUESTIONS, 12)
    for question, topic in questions:
        log.user(question.format(area="浅草"))
        if rng.random() < 0.6:
            found = _zh_restaurants(rng, "东京", "浅草", topic)
            log.call(
                (
                    "search_restaurants",
                    {"city": "东京", "area": "浅草", "keyword": topic, "exclude_allergens": ["海鲜"]},
                    found,
                )
            )
            best = found["results"][0]
            log.say(
                f"推荐{best['name']}，人均约{best['avg_price']['amount']}日元，从酒店步行{best['walk_minutes']}分"
                f"钟。{'需要提前预约。' if best['reservation_required'] else '不用预约。'}记得跟店员说明海鲜过敏。"
            )
        else:
            log.say(
                pick(
                    rng,
                    "这个一般不需要特别担心，到店里可以让店员帮忙确认配料。",
                    "可以的，浅草一带选择很多，我建议晚上早点去，避开排队高峰。",
                    "一般人均两三千日元，点单时注意说明过敏。",
                )
            )
        if rng.random() < 0.3:
            chatter(log, rng, ZH_CHATTER, 1, 1)
    log.user("好，现在把机票和酒店都订了。")
    flight = next(f for f in flights if f["flight_no"] == "CA929")
    guests = [{"name": name, "passport": passport} for name, passport in zip(travellers, passports)]
    twin = tokyo[0]["rooms"][0]
    sold_out = rng.random() < 0.5
    order = f"F{digits(rng, 10)}"
    stay = f"H{digits(rng, 9)}"
    hotel_args = {
        "hotel_id": "TYO-10477",
        "room_code": twin["room_code"],
        "check_in": start.isoformat(),
        "check_out": tokyo_out,
        "guests": travellers,
    }
    # the first booking of the room fails: sold out meanwhile, or the dates sent the wrong way round
    first_try = hotel_args if sold_out else {**hotel_args, "check_in": tokyo_out, "check_out": start.isoformat()}
    log.call(
        (
            "book_flight",
            {"flight_no": "CA929", "date": start.isoformat(), "passengers": guests},
            {
                "order_id": order,
                "status": "已出票",
                "total": {"amount": flight["price"]["amount"] * 2, "currency": "CNY"},
            },
        ),
        (
            "book_hotel",
            first_try,
            {"error": f"房型{twin['room_code']}已售罄"} if sold_out else "Error: check_out 必须晚于 check_in",
        ),
        thought=pick(rng, None, "同时预订机票和酒店。"),
    )
    if sold_out:
        king = tokyo[0]["rooms"][1]
        log.say(
            f"机票已出票，订单号{order}。但双床房刚刚售罄了，同一家酒店还有含早餐的大床房，每晚{king['price_per_night']['amount']}元，可以吗？"
        )
        log.user("那就大床房吧。")
        hotel_args = {**hotel_args, "room_code": king["room_code"]}
    log.call(
        (
            "book_hotel",
            hotel_args,
            {
                "booking_id": stay,
                "status": "已确认",
                "hotel": {"hotel_id": "TYO-10477", "room_code": hotel_args["room_code"]},
            },
        ),
        retry=True,
    )
    log.say(f"都订好了：机票订单{order}，浅草雷门酒店订单{stay}。")
    chatter(log, rng, ZH_CHATTER, 1, 3)
    # Seoul
    log.user("接下来是首尔，东京飞首尔的航班帮我看看。")
    seoul_flights = [
        _zh_flight(
            rng,
            f"{airline}{digits(rng, 3 if airline != '7C' else 4)}",
            "NRT",
            "ICN",
            arrive_seoul,
            rng.randint(700, 1500),
        )
        for airline in rng.sample(["KE", "OZ", "7C", "JL"], 3)
    ]
    log.call(
        (
            "search_flights",
            {"origin": "TYO", "destination": "SEL", "date": arrive_seoul, "passengers": 2},
            {"flights": seoul_flights, "currency": "CNY"},
        )
    )
    log.say(
        "\n".join(
            [f"{arrive_seoul}有这几班："]
            + [
                f"- {f['airline']} {f['depart']}起飞，每人{f['price']['amount']}元，"
                f"托运{f['baggage']['checked_kg']}公斤"
                for f in seoul_flights
            ]
        )
    )
    seoul_pick = min(seoul_flights, key=lambda f: f["depart"])
    log.user(pick(rng, "要最早那班。", "早上那班吧，这样下午能逛。"))
    log.say(f"好的，{seoul_pick['airline']} {seoul_pick['depart']}那班。首尔想住哪一带？")
    log.user(pick(rng, "弘大或者明洞都行，看看价格。", "明洞和弘大比较一下。"))
    seoul = [
        _zh_hotel(rng, f"SEL-{digits(rng, 5)}", "明洞乐天城市酒店", "明洞", arrive_seoul, home),
        _zh_hotel(rng, f"SEL-{digits(rng, 5)}", "弘大RYSE酒店", "弘大", arrive_seoul, home),
    ]
    log.call(
        ("search_hotels", {"city": "首尔", "check_in": arrive_seoul, "check_out": home, "guests": 2}, {"hotels": seoul})
    )
    log.say(
        "\n".join(
            ["首尔两家："]
            + [f"- {h['name']}，每晚{h['rooms'][0]['price_per_night']['amount']}元起，评分{h['rating']}" for h in seoul]
        )
    )
    chosen = rng.choice(seoul)
    log.user(f"{chosen['area']}那家吧。")
    chatter(log, rng, ZH_CHATTER, 1, 3)
    for question, topic in rng.sample(ZH_RESTAURANT_QUESTIONS, 4):
        log.user(question.format(area=chosen["area"]))
        found = _zh_restaurants(rng, "首尔", chosen["area"], topic)
        log.call(
            (
                "search_restaurants",
                {"city": "首尔", "area": chosen["area"], "keyword": topic, "exclude_allergens": ["海鲜"]},
                found,
            )
        )
        log.say(f"可以去{found['results'][0]['name']}，步行{found['results'][0]['walk_minutes']}分钟。")
    home_flight = _zh_flight(rng, f"CA{digits(rng, 3)}", "ICN", "PEK", home, rng.randint(900, 1600))
    log.user("回程也一起查一下，然后首尔的机票酒店和回程都订上。")
    log.call(
        (
            "search_flights",
            {"origin": "SEL", "destination": "PEK", "date": home, "passengers": 2},
            {"flights": [home_flight], "currency": "CNY"},
        )
    )
    log.say(
        f"回程只有{home_flight['flight_no']}一班直飞，{home_flight['depart']}起飞，每人{home_flight['price']['amount']}元。确认全部预订吗？"
    )
    log.user("确认。")
    orders = [f"F{digits(rng, 10)}", f"H{digits(rng, 9)}", f"F{digits(rng, 10)}"]
    log.call(
        (
            "book_flight",
            {"flight_no": seoul_pick["flight_no"], "date": arrive_seoul, "passengers": guests},
            {"order_id": orders[0], "status": "已出票"},
        ),
        (
            "book_hotel",
            {
                "hotel_id": chosen["hotel_id"],
                "room_code": chosen["rooms"][0]["room_code"],
                "check_in": arrive_seoul,
                "check_out": home,
                "guests": travellers,
            },
            {"booking_id": orders[1], "status": "已确认"},
        ),
        (
            "book_flight",
            {"flight_no": home_flight["flight_no"], "date": home, "passengers": guests},
            {"order_id": orders[2], "status": "已出票"},
        ),
    )
    log.say("全部订好了。")
    log.user("算一下一共花了多少，还剩多少预算？")
    total = flight["price"]["amount"] * 2 + seoul_pick["price"]["amount"] * 2 + home_flight["price"]["amount"] * 2
    log.call(
        (
            "calculate",
            {"expression": "+".join(f"{f['price']['amount']}*2" for f in (flight, seoul_pick, home_flight))},
            {"result": total},
        )
    )
    log.say(f"机票一共{total}元，加上酒店后还在{budget}元预算之内，具体剩余以酒店最终扣款为准。")


BUILDERS: dict[tuple[str, Language], Callable[[Log, random.Random, Language], None]] = {
    ("travel", "en"): travel_en,
    ("travel", "zh"): travel_zh,
}
