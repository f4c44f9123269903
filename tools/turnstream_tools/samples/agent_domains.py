"""The domains agent traces are written in: each a world of records (random ids, amounts, dates) and the story of
a user's errands through its tools. tools/turnstream_tools/samples/agent_traces.py runs them."""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from turnstream.text.language import Language
from turnstream_tools.samples.agent_policies import policy

if TYPE_CHECKING:
    from turnstream_tools.samples.agent_traces import Log

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
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
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
    cards: list[dict[str, Any]] = [m for m in methods.values() if m["source"] == "credit_card"]
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
    chatter(log, rng, pool, 2, 4)
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
    chatter(log, rng, pool, 2, 4)
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
    log.user(pick(rng, "酒店那边确认了吗？", "酒店订单现在什么状态？"))
    hotel_order = {"order_id": stay, "type": "hotel", "hotel_id": "TYO-10477", "room_code": hotel_args["room_code"]}
    log.call(("get_order", {"order_id": stay}, {**hotel_order, "status": "待酒店确认"}))
    log.say("酒店还在确认中，一般几分钟内完成。")
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
    log.user(pick(rng, "最后把所有订单再确认一遍。", "帮我再核对一下全部订单。"))
    log.call(
        (
            "get_order",
            {"order_id": order},
            {"order_id": order, "type": "flight", "flight_no": "CA929", "status": "已出票"},
        ),
        ("get_order", {"order_id": stay}, {**hotel_order, "status": "已确认"}),
        *(("get_order", {"order_id": each}, {"order_id": each, "status": "已确认"}) for each in orders),
    )
    log.say("全部订单都已确认，东京酒店也从待确认变成了已确认。")


# ---------------------------------------------------------------- retail orders

PRODUCTS: tuple[tuple[str, dict[str, tuple[str, ...]]], ...] = (
    (
        "Hiking Boots",
        {"size": ("8", "9", "10", "11", "12"), "material": ("leather", "synthetic"), "waterproof": ("yes", "no")},
    ),
    (
        "T-Shirt",
        {
            "color": ("blue", "black", "red", "white"),
            "size": ("S", "M", "L", "XL"),
            "material": ("cotton", "polyester"),
        },
    ),
    (
        "Water Bottle",
        {
            "capacity": ("500ml", "750ml", "1000ml"),
            "material": ("glass", "stainless steel", "plastic"),
            "color": ("green", "black", "white"),
        },
    ),
    (
        "Desk Lamp",
        {
            "color": ("black", "white", "silver"),
            "brightness": ("low", "medium", "high"),
            "power source": ("battery", "AC adapter", "USB"),
        },
    ),
    (
        "Backpack",
        {"color": ("grey", "navy", "olive"), "size": ("small", "medium", "large"), "material": ("nylon", "polyester")},
    ),
    (
        "Wireless Earbuds",
        {
            "color": ("black", "white", "blue"),
            "battery life": ("4 hours", "6 hours", "8 hours"),
            "water resistance": ("IPX4", "IPX7", "no"),
        },
    ),
    (
        "Coffee Maker",
        {
            "color": ("black", "stainless steel"),
            "capacity": ("4 cups", "8 cups", "12 cups"),
            "type": ("drip", "espresso", "french press"),
        },
    ),
    (
        "Running Shoes",
        {"size": ("7", "8", "9", "10", "11"), "color": ("black", "white", "red"), "sole": ("rubber", "EVA")},
    ),
)
RETAIL_CHATTER = (
    (
        "How long does an exchange usually take?",
        "Once the exchange is requested you'll get an email with return "
        "instructions; the new item ships when the old one is scanned by the carrier, usually 5 to 7 days in all.",
    ),
    (
        "Do I need the original box?",
        "Not necessarily, but the item should be packed securely. The return label comes in the email.",
    ),
    (
        "Can I exchange for a different product instead?",
        "An exchange has to stay within the same product; for a different "
        "product you would return this one and place a new order.",
    ),
    ("Will I be charged shipping?", "No, exchanges and returns through this process don't carry a shipping fee."),
    (
        "Why was my order split into two packages?",
        "Items can ship from different warehouses; each fulfilment has its "
        "own tracking number, which I can read out from the order.",
    ),
    (
        "What if the new size doesn't fit either?",
        "You could request another exchange once the new item is delivered, "
        "as long as the order is in delivered status.",
    ),
    (
        "Is the price difference refunded automatically?",
        "Yes, to the payment method you choose when we submit the exchange; "
        "a gift card refund is immediate, a card takes 5 to 7 business days.",
    ),
    (
        "Sorry, can you say that again? I got distracted.",
        "Of course. Nothing has been changed yet; I'm waiting for your confirmation before submitting anything.",
    ),
    (
        "Do you have these in stock in the store near me?",
        "I can only see online availability for each variant, not store stock.",
    ),
    ("Can you apply a discount code?", "I'm not able to apply discount codes to existing orders, sorry."),
)


def _variants(rng: random.Random, options: dict[str, tuple[str, ...]]) -> dict[str, dict[str, Any]]:
    variants: dict[str, dict[str, Any]] = {}
    for _ in range(rng.randint(9, 15)):
        item_id = digits(rng, 10)
        chosen = {name: rng.choice(values) for name, values in options.items()}
        variants[item_id] = {
            "item_id": item_id,
            "options": chosen,
            "available": rng.random() < 0.75,
            "price": money(rng, 20, 400),
        }
    return variants


def retail(log: Log, rng: random.Random, language: Language) -> None:
    user = person(rng)
    methods = payment_methods(rng, "credit_card", "gift_card")
    paypal = f"paypal_{digits(rng, 7)}"
    methods[paypal] = {"source": "paypal", "id": paypal}
    catalogue = {name: (digits(rng, 10), _variants(rng, options)) for name, options in rng.sample(PRODUCTS, 6)}
    names = list(catalogue)
    orders: list[dict[str, Any]] = []
    for index in range(rng.randint(3, 5)):
        bought = rng.sample(names, rng.randint(1, 3))
        items: list[dict[str, Any]] = []
        for name in bought:
            product_id, variants = catalogue[name]
            item = variants[rng.choice(list(variants))]
            items.append(
                {
                    "name": name,
                    "product_id": product_id,
                    "item_id": item["item_id"],
                    "price": item["price"],
                    "options": item["options"],
                }
            )
        total = round(sum(i["price"] for i in items), 2)
        status = "delivered" if index < 2 else pick(rng, "pending", "processed", "delivered")
        orders.append(
            {
                "order_id": f"#W{digits(rng, 7)}",
                "user_id": user["user_id"],
                "address": user["address"],
                "items": items,
                "fulfillments": []
                if status == "pending"
                else [{"tracking_id": [digits(rng, 12)], "item_ids": [i["item_id"] for i in items]}],
                "status": status,
                "payment_history": [
                    {"transaction_type": "payment", "amount": total, "payment_method_id": rng.choice(list(methods))}
                ],
            }
        )
    orders[2]["status"] = "pending"
    orders[2]["fulfillments"] = []
    catalogue_row = lambda r: table_row(  # noqa: E731 - one row of the catalogue table
        rng.choice(PRODUCTS)[0],
        digits(r, 10),
        f"{r.randint(3, 30)} variants",
        f"${r.randint(10, 90)}–${r.randint(100, 600)}",
        pick(r, "returnable", "final sale", "returnable 30 days"),
    )
    log.system(
        policy("retail", "en", rng, "## Catalogue (product, product id, variants, price range, returns)", catalogue_row)
    )
    log.user(
        pick(
            rng,
            "Hi! I want to exchange something I got.",
            "hello, I have a couple of problems with my orders",
            "Hey, I need to swap an item and cancel another order.",
        )
    )
    log.say(
        pick(
            rng,
            "I can help. First I need to verify you: what's your email address?",
            "Sure. Could you share the email on your account, or your name and zip code?",
        )
    )
    log.user(pick(rng, f"{user['email']}", f"It's {user['email']}."))
    log.call(("find_user_id_by_email", {"email": user["email"]}, user["user_id"]))
    profile = {
        "user_id": user["user_id"],
        "name": {"first_name": user["first"], "last_name": user["last"]},
        "address": user["address"],
        "email": user["email"],
        "payment_methods": methods,
        "orders": [o["order_id"] for o in orders],
    }
    log.call(("get_user_details", {"user_id": user["user_id"]}, profile))
    log.say(f"Thanks {user['first']}, you're verified. I see {len(orders)} orders. Which item do you want to exchange?")
    delivered = orders[0]
    swap = delivered["items"][0]
    log.user(
        pick(
            rng,
            f"The {swap['name'].lower()} I got recently. Wrong size/option.",
            f"It's the order with the {swap['name'].lower()}.",
        )
    )
    shown = orders[:]
    rng.shuffle(shown)
    log.call(
        *(("get_order_details", {"order_id": o["order_id"]}, o) for o in shown),
        thought=pick(rng, None, "Let me look at your recent orders."),
    )
    others = ", ".join(i["name"] for i in delivered["items"][1:])
    log.say(
        f"Found it: the {swap['name']} was delivered{' together with ' + others if others else ''}. "
        f"Its options are {', '.join(f'{k} {v}' for k, v in swap['options'].items())}. What would you like instead?"
    )
    chatter(log, rng, RETAIL_CHATTER, 2, 4)
    product_id, variants = catalogue[swap["name"]]
    log.call(
        (
            "get_product_details",
            {"product_id": product_id},
            {"name": swap["name"], "product_id": product_id, "variants": variants},
        )
    )
    available = [v for v in variants.values() if v["available"] and v["item_id"] != swap["item_id"]]
    unavailable = [v for v in variants.values() if not v["available"]]
    wanted = rng.choice(available)
    described = ", ".join(f"{k} {v}" for k, v in wanted["options"].items())
    log.say(
        "These options are in stock: "
        + "; ".join(
            ", ".join(f"{k} {v}" for k, v in v_["options"].items()) + f" (${v_['price']})" for v_ in available[:6]
        )
        + "."
    )
    log.user(pick(rng, f"I'll take {described}.", f"{described} please."))
    chatter(log, rng, RETAIL_CHATTER, 0, 2)
    gift = next(m for m in methods.values() if m["source"] == "gift_card")
    card = next(m for m in methods.values() if m["source"] == "credit_card")
    diff = round(wanted["price"] - swap["price"], 2)
    log.say(
        f"To confirm: exchange the {swap['name']} in order {delivered['order_id']} "
        f"for {described}; the price difference is ${diff}. Which payment method should take the difference?"
    )
    log.user(pick(rng, "Use my gift card.", "The gift card, yes please go ahead."))
    args = {
        "order_id": delivered["order_id"],
        "item_ids": [swap["item_id"]],
        "new_item_ids": [wanted["item_id"]],
        "payment_method_id": gift["id"],
    }
    if unavailable and rng.random() < 0.5:
        wrong = unavailable[0]
        log.call(
            (
                "exchange_delivered_order_items",
                {**args, "new_item_ids": [wrong["item_id"]]},
                f"Error: new item {wrong['item_id']} not found or available",
            )
        )
        log.say("I picked the wrong variant id there; trying again with the one you chose.")
    elif diff > gift["balance"]:
        log.call(
            (
                "exchange_delivered_order_items",
                args,
                "Error: insufficient gift card balance to pay for the price difference",
            )
        )
        log.say(f"The gift card has ${gift['balance']}, not enough for ${diff}. Shall I use the {card_words(card)}?")
        log.user("Fine, the card.")
        args = {**args, "payment_method_id": card["id"]}
    else:
        log.call(
            (
                "exchange_delivered_order_items",
                {
                    **args,
                    "item_ids": [delivered["items"][-1]["item_id"]]
                    if len(delivered["items"]) > 1
                    else [swap["item_id"], swap["item_id"]],
                },
                "Error: some item ids are not in the order or are duplicated",
            )
        )
        log.say("That call had the wrong item list; correcting it.")
    delivered["status"] = "exchange requested"
    delivered["exchange_items"] = [swap["item_id"]]
    delivered["exchange_new_items"] = [wanted["item_id"]]
    delivered["exchange_payment_method_id"] = args["payment_method_id"]
    delivered["exchange_price_difference"] = diff
    log.call(("exchange_delivered_order_items", args, delivered), retry=True)
    log.say("The exchange is requested; you'll get an email with the return instructions.")
    chatter(log, rng, RETAIL_CHATTER, 2, 4)
    pending = orders[2]
    chatter(log, rng, RETAIL_CHATTER, 1, 2)
    log.user(
        pick(
            rng,
            f"Next: cancel the order with the {pending['items'][0]['name'].lower()}, I don't need it anymore.",
            f"Also I want to cancel the {pending['items'][0]['name'].lower()} order.",
        )
    )
    if pending not in shown:
        log.call(("get_order_details", {"order_id": pending["order_id"]}, pending))
    log.say(f"Order {pending['order_id']} is pending, so it can be cancelled. Reason: no longer needed? Confirm?")
    log.user("Yes, no longer needed.")
    pending["status"] = "cancelled"
    log.call(("cancel_pending_order", {"order_id": pending["order_id"], "reason": "no longer needed"}, pending))
    log.say("Cancelled; the refund goes back to the original payment method.")
    chatter(log, rng, RETAIL_CHATTER, 2, 4)
    second = orders[1]
    back = second["items"][-1]
    log.user(
        pick(
            rng,
            f"And I want to return the {back['name'].lower()}, refund to my gift card.",
            f"Last thing: return the {back['name'].lower()} please. Gift card refund.",
        )
    )
    log.call(("get_order_details", {"order_id": second["order_id"]}, second))
    log.say(
        f"The {back['name']} (${back['price']}) in order {second['order_id']} "
        "can be returned to your gift card. Confirm?"
    )
    log.user("Confirm.")
    second["status"] = "return requested"
    second["return_items"] = [back["item_id"]]
    second["return_payment_method_id"] = gift["id"]
    log.call(
        (
            "return_delivered_order_items",
            {"order_id": second["order_id"], "item_ids": [back["item_id"]], "payment_method_id": gift["id"]},
            second,
        )
    )
    log.say("Return requested.")
    chatter(log, rng, RETAIL_CHATTER, 2, 3)
    log.user(pick(rng, "Can you check where the exchange stands?", "Is the exchange still fine?"))
    log.call(("get_order_details", {"order_id": delivered["order_id"]}, delivered))
    log.say(f"Order {delivered['order_id']} is in status '{delivered['status']}'.")
    browse = rng.choice([n for n in names if n != swap["name"]])
    browse_id, browse_variants = catalogue[browse]
    log.user(
        pick(
            rng,
            f"Unrelated: do you have the {browse.lower()} in other options?",
            f"Before I go, what {browse.lower()} options exist?",
        )
    )
    log.call(
        (
            "get_product_details",
            {"product_id": browse_id},
            {"name": browse, "product_id": browse_id, "variants": browse_variants},
        )
    )
    log.say(
        f"There are {len(browse_variants)} variants of the {browse}, "
        f"{sum(v['available'] for v in browse_variants.values())} "
        "in stock."
    )
    chatter(log, rng, RETAIL_CHATTER, 2, 4)
    log.user(pick(rng, "Can you give me the status of all my orders?", "What's the state of every order now?"))
    log.call(*(("get_order_details", {"order_id": o["order_id"]}, o) for o in orders))
    log.say("\n".join(f"- {o['order_id']}: {o['status']}" for o in orders))
    log.user(pick(rng, "Great, thanks for everything!", "ok thanks, bye"))
    log.say(f"You're welcome, {user['first']}! Have a great day.")


# ---------------------------------------------------------------- telecom support

PLANS = (
    ("plan_basic_5", "Basic 5 GB", 25, 5),
    ("plan_smart_15", "Smart 15 GB", 35, 15),
    ("plan_smart_30", "Smart 30 GB", 45, 30),
    ("plan_unlimited", "Unlimited", 60, 999),
    ("plan_unlimited_plus", "Unlimited Plus", 75, 999),
    ("plan_family_50", "Family Share 50 GB", 90, 50),
)
DEVICES = ("Pixel 8", "iPhone 14", "Galaxy S23", "iPhone 12 mini", "Moto G Power", "Galaxy A54")
TELECOM_CHATTER = (
    (
        "Why is the bill higher than usual?",
        "Most of the difference is one-off charges this cycle; the plans themselves didn't change price.",
    ),
    ("Does the new plan include hotspot?", "Yes, it includes hotspot data; the amount is listed with each plan."),
    (
        "Will changing plans reset my data?",
        "If the change applies at the next cycle your current allowance "
        "stays until then; an immediate change prorates it.",
    ),
    ("Is there a contract?", "No, the plans are month to month; you can change them at any time."),
    (
        "Could you just waive the whole thing?",
        "I can only refund within the goodwill limits of our policy; anything above needs a supervisor ticket.",
    ),
    (
        "How do I check my data usage myself?",
        "Dial #DATA# from the line or open the app's usage tab; it updates every few hours.",
    ),
    (
        "My son says the internet is slow at school, is that you or the phone?",
        "I can check the network status for the school's zip code and the phone's settings to narrow it down.",
    ),
    (
        "Do you have 5G in my area?",
        "The network check I'll run shows the towers near the zip code and whether they serve 5G.",
    ),
    (
        "What's the cheapest way to use my phone abroad?",
        "A roaming pass bought before you travel is cheapest; without one, calls and data are charged per use.",
    ),
    ("OK hold on, let me find my glasses.", "Take your time."),
)


def telecom(log: Log, rng: random.Random, language: Language) -> None:
    holder = person(rng)
    area = rng.choice(("512", "206", "303", "617"))
    members = [holder["first"], *rng.sample([n for n in FIRST if n != holder["first"]], rng.randint(2, 3))]
    lines: list[dict[str, Any]] = []
    for index, member in enumerate(members):
        plan = rng.choice(PLANS)
        lines.append(
            {
                "line_id": f"LN-{digits(rng, 5)}",
                "phone_number": f"{area}-555-{digits(rng, 4)}",
                "user": member,
                "plan_id": plan[0],
                "device": {
                    "device_id": f"DEV-{digits(rng, 6)}",
                    "model": rng.choice(DEVICES),
                    "imei": digits(rng, 15),
                    "esim": rng.random() < 0.5,
                },
                "status": "active",
                "data_used_gb": round(rng.uniform(0.5, 40), 1),
                "roaming": {"enabled": index == 1, "passes": []},
                "usage": [
                    {
                        "date": f"day-{d}",
                        "data_gb": round(rng.uniform(0, 2.5), 2),
                        "calls_min": rng.randint(0, 90),
                        "sms": rng.randint(0, 40),
                    }
                    for d in range(1, 15)
                ],
            }
        )
    account = f"BA-{digits(rng, 7)}"
    customer: dict[str, Any] = {
        "customer_id": f"CUS-{digits(rng, 5)}",
        "name": f"{holder['first']} {holder['last']}",
        "dob": holder["dob"],
        "billing_account": {
            "account_id": account,
            "balance": {"amount": money(rng, 80, 300), "currency": "USD"},
            "autopay": rng.random() < 0.6,
            "payment_method": {
                "type": "card",
                "brand": rng.choice(["visa", "mastercard"]),
                "last_four": digits(rng, 4),
            },
        },
        "lines": [{k: line[k] for k in ("line_id", "phone_number", "user", "plan_id", "status")} for line in lines],
        "address": holder["address"],
    }
    plan_row = lambda r: table_row(  # noqa: E731 - one row of the plan catalogue
        pick(r, *(p[1] for p in PLANS)),
        f"${r.randint(20, 95)}/mo",
        f"{r.randint(2, 60)} GB",
        pick(r, "EU, UK", "Canada, Mexico", "none", "worldwide"),
        f"{r.randint(0, 30)} GB hotspot",
    )
    log.system(policy("telecom", "en", rng, "## Plans on sale (name, price, data, roaming zones, hotspot)", plan_row))
    log.user(
        pick(
            rng,
            "Hi, my bill this month is way too high.",
            "hello, I need help with my bill and one of our lines",
            "Hey. Bill question, and my son's phone has no internet.",
        )
    )
    log.say(
        "I can help with that. Please give me the phone number on the "
        "account and the last two digits of your account PIN."
    )
    own = lines[0]
    log.user(f"{own['phone_number']}, PIN ends in {digits(rng, 2)}.")
    log.call(("get_customer_by_phone", {"phone_number": own["phone_number"]}, customer))
    log.say(
        f"Thanks {holder['first']}, you're verified as the account holder. There are {len(lines)} lines on the account."
    )
    roaming_line = lines[1]
    charges: list[dict[str, Any]] = [
        {
            "charge_id": f"chg_{digits(rng, 7)}",
            "line_id": line["line_id"],
            "description": f"{next(p[1] for p in PLANS if p[0] == line['plan_id'])} monthly plan",
            "amount": {"amount": float(next(p[2] for p in PLANS if p[0] == line["plan_id"])), "currency": "USD"},
        }
        for line in lines
    ]
    roaming = round(rng.uniform(60, 180), 2)
    roam_charge = {
        "charge_id": f"chg_{digits(rng, 7)}",
        "line_id": roaming_line["line_id"],
        "description": "Roaming data, Canada (pay per use)",
        "amount": {"amount": roaming, "currency": "USD"},
    }
    extras: list[dict[str, Any]] = [
        {
            "charge_id": f"chg_{digits(rng, 7)}",
            "line_id": line["line_id"],
            "description": d,
            "amount": {"amount": money(rng, 1, 15), "currency": "USD"},
        }
        for line in lines
        for d in rng.sample(
            (
                "Premium SMS",
                "Device insurance",
                "Regulatory fee",
                "Device instalment 14/24",
                "International calls",
                "Directory assistance",
            ),
            3,
        )
    ]
    all_charges: list[dict[str, Any]] = charges + [roam_charge] + extras
    rng.shuffle(all_charges)
    period = pick(rng, "2024-05", "2024-06", "2024-08")
    bill: dict[str, Any] = {
        "bill_id": f"BILL-{digits(rng, 8)}",
        "account_id": account,
        "period": period,
        "charges": all_charges,
        "total": {"amount": round(sum(c["amount"]["amount"] for c in all_charges), 2), "currency": "USD"},
        "due_date": f"{period}-28",
    }
    log.call(("get_bill", {"account_id": account, "period": period}, bill))
    earlier = f"{period[:5]}{int(period[5:]) - 1:02d}"
    last_bill: dict[str, Any] = {
        **bill,
        "bill_id": f"BILL-{digits(rng, 8)}",
        "period": earlier,
        "charges": charges,
        "total": {"amount": round(sum(c["amount"]["amount"] for c in charges), 2), "currency": "USD"},
    }
    log.user(pick(rng, "What was it last month?", "Compare with the month before please."))
    log.call(("get_bill", {"account_id": account, "period": earlier}, last_bill))
    log.say(
        f"Your {period} bill is ${bill['total']['amount']}, against ${last_bill['total']['amount']} "
        f"for {earlier}. The biggest extra is ${roaming} of pay-per-use "
        f"roaming data in Canada on {roaming_line['user']}'s line."
    )
    chatter(log, rng, TELECOM_CHATTER, 2, 4)
    log.user(
        pick(
            rng,
            f"Yes, {roaming_line['user']} was in Canada for two days. Can you take that off?",
            f"That's {roaming_line['user']}'s trip. Can you refund the roaming?",
        )
    )
    limit = round(roaming / 2, 2)
    log.say(
        f"I can refund 50% of the roaming charges as a one-time goodwill gesture, that's ${limit}. Shall I go ahead?"
    )
    log.user("Better than nothing. Yes.")
    log.call(
        (
            "refund_charge",
            {"account_id": account, "charge_id": roam_charge["charge_id"], "amount": roaming},
            f"Error: amount {roaming} exceeds goodwill limit {limit} for charge {roam_charge['charge_id']}",
        )
    )
    log.call(
        (
            "refund_charge",
            {"account_id": account, "charge_id": roam_charge["charge_id"], "amount": limit},
            {
                "refund_id": f"RF-{digits(rng, 8)}",
                "charge_id": roam_charge["charge_id"],
                "amount": {"amount": limit, "currency": "USD"},
                "status": "credited",
            },
        ),
        retry=True,
    )
    log.say(f"Done: ${limit} is credited to the account and will show on the next bill.")
    chatter(log, rng, TELECOM_CHATTER, 2, 4)
    log.user(
        pick(
            rng,
            "And my own plan, I never use that much data. What else is there?",
            "Can I get a cheaper plan for my line?",
        )
    )
    log.call(
        ("get_line_details", {"line_id": own["line_id"]}, own),
        (
            "get_plan_options",
            {"line_id": own["line_id"]},
            {
                "plans": [
                    {
                        "plan_id": p[0],
                        "name": p[1],
                        "price": {"amount": float(p[2]), "currency": "USD"},
                        "data_gb": p[3],
                        "hotspot_gb": min(p[3], rng.choice([0, 5, 10, 15])),
                        "roaming_zones": rng.sample(["EU", "UK", "Canada", "Mexico"], rng.randint(0, 2)),
                    }
                    for p in PLANS
                ]
            },
        ),
    )
    cheaper = rng.choice([p for p in PLANS if p[3] < 100])
    log.say(
        f"You used {own['data_used_gb']} GB this cycle. Plans range from $25 for 5 GB to $90 for a 50 GB family share."
    )
    log.user(
        pick(
            rng,
            f"The {cheaper[3]} GB one for ${cheaper[2]}.",
            f"I'll go with {cheaper[3]} gigs at ${cheaper[2]} a month.",
        )
    )
    log.say(f"Changing {own['phone_number']} to {cheaper[1]} at the start of the next cycle. Confirm?")
    log.user("Confirm.")
    own["plan_id"] = cheaper[0]
    log.call(
        (
            "change_plan",
            {"line_id": own["line_id"], "plan_id": cheaper[0], "effective": "next_cycle"},
            {**own, "pending_change": {"plan_id": cheaper[0], "effective_date": f"{period}-29"}},
        )
    )
    log.say("Your plan change is scheduled.")
    chatter(log, rng, TELECOM_CHATTER, 2, 4)
    kid = lines[-1]
    log.user(
        pick(
            rng,
            f"Now {kid['user']}'s phone, no mobile data since yesterday.",
            f"Last thing, {kid['user']} has no internet on the {kid['device']['model']}.",
        )
    )
    status = {
        "zip": holder["address"]["zip"],
        "towers": [
            {
                "site_id": f"SITE-{digits(rng, 4)}",
                "status": rng.choice(["ok", "ok", "degraded"]),
                "5g": rng.random() < 0.7,
            }
            for _ in range(3)
        ],
        "outages": [],
    }
    log.call(
        ("check_network_status", {"zip": holder["address"]["zip"]}, status),
        (
            "get_device",
            {"device_id": kid["device"]["device_id"]},
            {
                **kid["device"],
                "apn": pick(rng, "internet.carrier", "wap.old-carrier"),
                "airplane_mode": False,
                "mobile_data": True,
            },
        ),
    )
    log.say(
        "The network near you is fine and the phone's settings look right apart from the APN. Has it been restarted?"
    )
    log.user("Yes, twice. Still nothing.")
    ticket = f"TCK-{digits(rng, 6)}"
    log.call(
        (
            "create_ticket",
            {
                "customer_id": customer["customer_id"],
                "line_id": kid["line_id"],
                "category": "device",
                "description": f"No mobile data on {kid['device']['model']} since yesterday; restarted twice; "
                "APN checked",
            },
            {"ticket_id": ticket, "status": "open", "eta_hours": 24},
        )
    )
    log.say(f"I opened ticket {ticket}; a device specialist will reply within 24 hours.")
    chatter(log, rng, TELECOM_CHATTER, 1, 2)
    log.user(pick(rng, "Can you see if someone picked up the ticket already?", "Any update on the ticket?"))
    log.call(
        (
            "get_ticket",
            {"ticket_id": ticket},
            {
                "ticket_id": ticket,
                "status": "assigned",
                "assignee": "device-support-tier2",
                "line_id": kid["line_id"],
                "notes": [{"at": f"{period}-20T10:12:00Z", "text": "APN reset pushed over the air"}],
            },
        )
    )
    log.say(
        "It's assigned to tier-2 device support, and they've pushed an "
        "APN reset. Ask them to restart the phone once more."
    )
    target = rng.choice([roaming_line, own])
    whose = "my line" if target is own else f"{target['user']}'s line"
    log.user(
        pick(
            rng,
            f"Also we go to Europe next month. Turn on roaming for {whose}?",
            f"Oh and roaming in Europe for {whose} please.",
        )
    )
    log.call(
        (
            "enable_roaming",
            {"line_id": target["line_id"], "zone": "EU", "start_date": f"{period}-30", "days": rng.randint(5, 14)},
            {
                "line_id": target["line_id"],
                "roaming": {
                    "enabled": True,
                    "passes": [
                        {
                            "pass_id": f"RP-{digits(rng, 6)}",
                            "zone": "EU",
                            "price": {"amount": 10.0, "currency": "USD"},
                            "per": "day",
                        }
                    ],
                },
            },
        )
    )
    log.say("Roaming is on for the EU with a $10/day pass.")
    chatter(log, rng, TELECOM_CHATTER, 2, 4)
    log.user(pick(rng, "Can you list every line with its plan now?", "Summary of all our lines please."))
    log.call(*(("get_line_details", {"line_id": line["line_id"]}, line) for line in lines))
    log.say("\n".join(f"- {line['user']} {line['phone_number']}: {line['plan_id']}" for line in lines))


# ---------------------------------------------------------------- banking

MERCHANTS = (
    "Amazon Marketplace",
    "Shell 4412",
    "Blue Bottle Coffee",
    "Netflix",
    "Uber Trip",
    "Whole Foods",
    "Apple.com/bill",
    "Delta Air Lines",
    "Best Buy #1182",
    "Spotify",
)
BANKING_CHATTER = (
    (
        "How long does a dispute take?",
        "Most card disputes are decided within 10 business days; a provisional credit usually appears within 2.",
    ),
    (
        "Will freezing the card stop my subscriptions?",
        "Yes, recurring payments on a frozen card are declined; you'd move them to the new card once it arrives.",
    ),
    (
        "Can I see pending transactions too?",
        "Yes, they're listed with status pending; they can't be disputed until they post.",
    ),
    (
        "Why is my available balance lower than the ledger?",
        "The available balance subtracts pending transactions and holds; the ledger shows posted ones only.",
    ),
    (
        "Is there a fee for the transfer?",
        "Transfers to payees in the same country are free; international ones carry the fee shown at confirmation.",
    ),
    ("When will the new card arrive?", "Replacement cards arrive in 5 to 7 business days at the address on file."),
    (
        "Can you raise my daily limit?",
        "I can't raise limits myself; I can split a payment across days if it's above the limit.",
    ),
    (
        "Sorry, my phone died for a sec. Where were we?",
        "No problem, nothing was sent in the meantime. We were reviewing your transactions.",
    ),
    ("Do you store my card number in this chat?", "No, I only ever see and show the last four digits."),
    (
        "What's the overdraft fee again?",
        "It's 35 in your account's currency per occurrence; one can be waived per calendar year per account.",
    ),
)


def banking(log: Log, rng: random.Random, language: Language) -> None:
    holder = person(rng)
    currency = pick(rng, "USD", "EUR", "GBP")
    sign = {"USD": "$", "EUR": "€", "GBP": "£"}[currency]
    start = date(2024, rng.randint(3, 10), rng.randint(1, 28))
    accounts: list[dict[str, Any]] = []
    for kind in ("current", "savings", pick(rng, "credit", "current")):
        txns: list[dict[str, Any]] = []
        for offset in sorted(rng.sample(range(1, 60), rng.randint(10, 18))):
            txns.append(
                {
                    "txn_id": f"TX-{code(rng, 10)}",
                    "date": day(start, -offset),
                    "merchant": rng.choice(MERCHANTS),
                    "amount": {"value": -money(rng, 4, 480), "currency": currency},
                    "status": "posted" if offset > 2 else "pending",
                }
            )
        accounts.append(
            {
                "account_id": f"ACC-{digits(rng, 8)}",
                "type": kind,
                "currency": currency,
                "balance": {"available": money(rng, 200, 9000), "ledger": money(rng, 200, 9000)},
                "transactions": txns,
            }
        )
    accounts[0]["balance"]["available"] = money(rng, 100, 900)
    cards: list[dict[str, Any]] = [
        {
            "card_id": f"card_{digits(rng, 7)}",
            "last_four": digits(rng, 4),
            "account_id": a["account_id"],
            "status": "active",
            "type": "debit" if a["type"] != "credit" else "credit",
        }
        for a in accounts
        if a["type"] != "savings"
    ]
    landlord = pick(rng, "Greenfield Properties", "M. Alvarez (landlord)", "Oakwood Lettings")
    payees: list[dict[str, Any]] = [
        {
            "payee_id": f"PY-{digits(rng, 6)}",
            "name": name,
            "iban": f"{pick(rng, 'DE', 'GB', 'FR')}{digits(rng, 2)} **** **** {digits(rng, 4)}",
        }
        for name in (landlord, "City Water", pick(rng, "Sam Okafor", "Lena Brandt"), "Tax Office")
    ]
    customer_id = f"CU-{digits(rng, 7)}"
    fee_row = lambda r: table_row(  # noqa: E731 - one row of the fee schedule
        pick(r, "Current", "Savings", "Credit", "Business current"),
        pick(
            r,
            "Domestic transfer",
            "International transfer",
            "Overdraft",
            "Card replacement",
            "Cash withdrawal abroad",
            "Paper statement",
        ),
        f"{sign}{r.randint(0, 40)}",
        pick(r, "per occurrence", "monthly", "per item"),
        pick(r, "waivable once a year", "not waivable", "free for premium"),
    )
    log.system(
        policy("banking", "en", rng, f"## Fee schedule ({currency}: account, item, fee, basis, waiver)", fee_row)
    )
    log.user(
        pick(
            rng,
            "Hi, there's a charge on my card I don't recognise.",
            "hello, I think my card was used by someone else, and I need to pay my rent",
            "Hey, I need to dispute something and make a transfer.",
        )
    )
    log.say(
        "I'm sorry to hear that. First I need to verify you: your full "
        "name, date of birth, and the last four digits of a card on file."
    )
    card = cards[0]
    log.user(f"{holder['first']} {holder['last']}, born {holder['dob']}, card ends {card['last_four']}.")
    log.call(
        (
            "verify_customer",
            {
                "full_name": f"{holder['first']} {holder['last']}",
                "dob": holder["dob"],
                "card_last_four": card["last_four"],
            },
            {"verified": True, "customer_id": customer_id},
        )
    )
    log.call(
        (
            "get_customer",
            {"customer_id": customer_id},
            {
                "customer_id": customer_id,
                "name": f"{holder['first']} {holder['last']}",
                "accounts": [a["account_id"] for a in accounts],
                "cards": cards,
                "payees": payees,
                "address": holder["address"],
            },
        )
    )
    log.say(f"Thank you, {holder['first']}, you're verified. You have {len(accounts)} accounts and {len(cards)} cards.")
    chatter(log, rng, BANKING_CHATTER, 1, 2)
    log.user(
        pick(rng, "Can you show me the recent transactions?", "Let me see what went out recently on all accounts.")
    )
    log.call(
        *(("get_account", {"account_id": a["account_id"]}, a) for a in accounts),
        thought=pick(rng, None, "Reading all three accounts."),
    )
    current = accounts[0]
    posted = [t for t in current["transactions"] if t["status"] == "posted"]
    pending_txn = next((t for t in current["transactions"] if t["status"] == "pending"), None)
    bad = rng.choice(posted)
    log.say(
        "\n".join(
            f"- {t['date']} {t['merchant']} {sign}{-t['amount']['value']} ({t['status']})"
            for t in current["transactions"][-8:]
        )
    )
    log.user(
        pick(
            rng,
            f"That {bad['merchant']} one for {sign}{-bad['amount']['value']} isn't mine.",
            f"I never paid {bad['merchant']} on {bad['date']}.",
        )
    )
    if pending_txn is not None:
        log.call(
            (
                "dispute_transaction",
                {"account_id": current["account_id"], "txn_id": pending_txn["txn_id"], "reason": "unrecognised"},
                f"Error: transaction {pending_txn['txn_id']} is pending and cannot be disputed",
            )
        )
        log.say("Sorry, I selected the wrong transaction; disputing the posted one you named.")
    else:
        log.call(
            (
                "dispute_transaction",
                {"account_id": accounts[1]["account_id"], "txn_id": bad["txn_id"], "reason": "unrecognised"},
                {"error": f"transaction {bad['txn_id']} not found on account {accounts[1]['account_id']}"},
            )
        )
        log.say("That went to the wrong account; correcting it.")
    dispute = f"DSP-{digits(rng, 6)}"
    log.call(
        (
            "dispute_transaction",
            {"account_id": current["account_id"], "txn_id": bad["txn_id"], "reason": "unrecognised"},
            {"dispute_id": dispute, "status": "opened", "txn_id": bad["txn_id"], "amount": bad["amount"]},
        ),
        retry=True,
    )
    log.say(f"Dispute {dispute} is open. Because the card may be compromised, I recommend freezing it. Shall I?")
    log.user("Yes freeze it.")
    card["status"] = "frozen"
    log.call(("freeze_card", {"card_id": card["card_id"]}, card))
    log.say(f"The card ending {card['last_four']} is frozen. I can order a replacement.")
    log.user("Please do.")
    replacement = {
        "card_id": f"card_{digits(rng, 7)}",
        "last_four": digits(rng, 4),
        "account_id": card["account_id"],
        "status": "shipped",
        "replaces": card["card_id"],
        "eta": day(start, 6),
    }
    log.call(("replace_card", {"card_id": card["card_id"], "ship_to": "address_on_file"}, replacement))
    log.say(f"A new card ending {replacement['last_four']} ships today.")
    chatter(log, rng, BANKING_CHATTER, 2, 4)
    rent = round(rng.uniform(900, 2400), 2)
    log.user(
        pick(
            rng,
            f"Now I need to pay {sign}{rent} rent to {landlord}.",
            f"Also send {sign}{rent} to {landlord} for rent, please.",
        )
    )
    payee = payees[0]
    log.say(f"Sending {sign}{rent} to {landlord} from your current account. Confirm?")
    log.user("Confirm.")
    log.call(
        (
            "transfer_funds",
            {
                "from_account_id": current["account_id"],
                "payee_id": payee["payee_id"],
                "amount": rent,
                "currency": currency,
                "memo": "Rent",
            },
            f"Error: insufficient available balance on {current['account_id']} "
            f"({current['balance']['available']} {currency})",
        )
    )
    log.say(
        f"The current account only has {sign}{current['balance']['available']} "
        "available. Would you like to send it from savings instead?"
    )
    log.user("Yes, from savings.")
    savings = accounts[1]
    transfer = {
        "transfer_id": f"TRF-{digits(rng, 9)}",
        "from_account_id": savings["account_id"],
        "payee_id": payee["payee_id"],
        "amount": {"value": rent, "currency": currency},
        "status": "sent",
        "value_date": day(start, 0),
    }
    log.call(
        (
            "transfer_funds",
            {
                "from_account_id": savings["account_id"],
                "payee_id": payee["payee_id"],
                "amount": rent,
                "currency": currency,
                "memo": "Rent",
            },
            transfer,
        ),
        retry=True,
    )
    log.say(f"Sent: transfer {transfer['transfer_id']}.")
    chatter(log, rng, BANKING_CHATTER, 2, 4)
    log.user(pick(rng, "Any news on the dispute?", "Has the dispute moved yet?"))
    log.call(
        (
            "get_dispute",
            {"dispute_id": dispute},
            {
                "dispute_id": dispute,
                "status": "provisional credit issued",
                "txn_id": bad["txn_id"],
                "credit": {"value": -bad["amount"]["value"], "currency": currency, "account_id": current["account_id"]},
            },
        )
    )
    log.say(
        f"Yes: a provisional credit of {sign}{-bad['amount']['value']} "
        "was issued to your current account while it's investigated."
    )
    log.user(
        pick(
            rng, "Then move 200 back from savings to current.", "Ok, top up the current account with 200 from savings."
        )
    )
    log.call(
        (
            "transfer_between_accounts",
            {
                "from_account_id": savings["account_id"],
                "to_account_id": current["account_id"],
                "amount": 200,
                "currency": currency,
            },
            {"transfer_id": f"TRF-{digits(rng, 9)}", "status": "completed"},
        )
    )
    log.say("Done, 200 moved to current.")
    chatter(log, rng, BANKING_CHATTER, 2, 4)
    log.user(pick(rng, "Show me all the balances now.", "Where do my accounts stand after all that?"))
    current["balance"]["available"] = round(current["balance"]["available"] + 200 - bad["amount"]["value"], 2)
    savings["balance"]["available"] = round(savings["balance"]["available"] - rent - 200, 2)
    log.call(*(("get_account", {"account_id": a["account_id"]}, a) for a in accounts))
    log.say(
        "\n".join(f"- {a['type']} {a['account_id']}: {sign}{a['balance']['available']} available" for a in accounts)
    )


# ---------------------------------------------------------------- incident response

SERVICES = ("checkout", "payments-api", "auth", "search", "catalog", "notifications")
REGIONS = ("eu-west-1", "us-east-1", "ap-southeast-2")
ENGINEERS = ("priya", "marcus", "dana", "kenji", "olu", "sara")
INCIDENT_CHATTER = (
    (
        "Is it all customers or just some?",
        "The 5xx rate is about {rate}% in that region only; other regions look normal.",
    ),
    (
        "Should we tell support?",
        "Yes, I'd let support know there is an active incident so they can tag incoming tickets to it.",
    ),
    (
        "Any chance it's the database?",
        "The database latency metrics are flat; I'd hold off on that until we see evidence.",
    ),
    (
        "What's the SLO again?",
        "Checkout's SLO is 99.9% of requests succeeding over 30 days; today's "
        "errors are eating into the monthly budget.",
    ),
    (
        "Can we just restart the pods?",
        "A restart could clear it if it's a bad connection pool, but the "
        "errors line up with a deploy, so a rollback is the safer first step.",
    ),
    (
        "Who's on call for payments?",
        "The payments primary this week is on the rota; I can page them through the incident.",
    ),
    (
        "How long until the next status update is due?",
        "For a SEV1 it's every 30 minutes; the next one is due in about 20.",
    ),
    ("brb grabbing coffee", "Ok, I'll keep watching the error rate."),
    (
        "Do we have a feature flag for the new flow?",
        "I can't see flag states from my tools; whoever owns the change would know.",
    ),
    (
        "Write me a one-line summary for the exec channel.",
        "Checkout errors in {region} since {start}, likely tied to a deploy; "
        "rollback under way, next update in 30 minutes.",
    ),
)


def _sha(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(40))


def incident(log: Log, rng: random.Random, language: Language) -> None:
    service, region = rng.choice(SERVICES), rng.choice(REGIONS)
    hour = rng.randint(8, 20)
    began = f"2024-{rng.randint(3, 11):02d}-{rng.randint(10, 28):02d}T{hour:02d}:{rng.randint(10, 50):02d}:00Z"
    owner = rng.choice(("payments", "platform", "growth", "identity"))
    culprit_author = rng.choice(ENGINEERS)
    deploys: list[dict[str, Any]] = []
    for index in range(rng.randint(5, 8)):
        author = culprit_author if index == 0 else rng.choice([e for e in ENGINEERS if e != culprit_author])
        deploys.append(
            {
                "deploy_id": f"dep-{code(rng, 6).lower()}",
                "commit": _sha(rng),
                "author": author,
                "at": f"{began[:11]}{hour - index - (0 if index == 0 else 1):02d}:{rng.randint(0, 59):02d}:00Z",
                "status": "succeeded",
                "version": f"v{rng.randint(3, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
                "changes": [
                    {
                        "path": f"services/{service}/{rng.choice(['handlers', 'clients', 'config'])}/"
                        f"{rng.choice(['cart', 'pricing', 'retry', 'pool', 'tax'])}.go"
                    }
                    for _ in range(rng.randint(1, 3))
                ],
            }
        )
    culprit, previous = deploys[0], deploys[1]
    incident_id = f"INC-{digits(rng, 5)}"
    rate = round(rng.uniform(6, 35), 1)
    fill = {"rate": rate, "region": region, "start": began[11:16]}
    pool = [(q, a.format(**fill)) for q, a in INCIDENT_CHATTER]
    runbook_row = lambda r: table_row(  # noqa: E731 - one row of the service catalogue
        rng.choice(SERVICES),
        pick(r, "payments", "platform", "growth", "identity"),
        f"{pick(r, 99.9, 99.95, 99.5)}%",
        f"#{pick(r, 'pay', 'plat', 'grow', 'id')}-oncall",
        pick(r, "rollback first", "scale first", "failover allowed", "no failover"),
    )
    log.system(
        policy(
            "incident", "en", rng, "## Service catalogue (service, owner, SLO, channel, first response)", runbook_row
        )
    )
    log.user(
        pick(
            rng,
            f"{service} is throwing 500s in {region}, started maybe 10 min ago. Help.",
            f"We're seeing errors on {service} in {region}. Can you start an incident?",
        )
    )
    alerts: list[dict[str, Any]] = [
        {
            "alert_id": f"ALR-{digits(rng, 6)}",
            "service": service,
            "severity": rng.choice(["critical", "warning"]),
            "started_at": began,
            "labels": {
                "region": region,
                "endpoint": f"/api/{rng.choice(['cart', 'orders', 'pay', 'session'])}",
                "error_code": rng.choice(["UPSTREAM_TIMEOUT", "HTTP_503", "CONN_RESET"]),
            },
        }
        for _ in range(rng.randint(3, 6))
    ]
    log.call(("list_alerts", {"service": service, "region": region}, {"alerts": alerts}))
    log.say(
        f"{len(alerts)} alerts firing since {began[11:16]} UTC, mostly "
        f"{alerts[0]['labels']['error_code']}. That's SEV1 territory. Opening the incident."
    )
    log.call(
        (
            "create_incident",
            {"title": f"{service} 5xx in {region}", "severity": "SEV1", "service": service, "region": region},
            {
                "incident_id": incident_id,
                "status": "investigating",
                "commander": None,
                "url": f"https://status.internal/incidents/{incident_id}",
            },
        )
    )
    log.user("You're IC-assist, I'm commander. Go.")
    metrics: dict[str, Any] = {
        "service": service,
        "metric": "http_5xx_rate",
        "region": region,
        "series": [
            {"ts": f"{began[:14]}{m:02d}:00Z", "value": round(rng.uniform(0.1, rate), 2)} for m in range(0, 60, 10)
        ],
    }
    log.call(
        ("query_metrics", {"service": service, "metric": "http_5xx_rate", "window": "30m", "region": region}, metrics),
        ("get_deploys", {"service": service, "limit": len(deploys)}, {"deploys": deploys}),
        thought=pick(rng, None, "Pulling the error rate and recent deploys together."),
    )
    log.say("\n".join(f"- {d['at'][11:16]} {d['author']} {d['version']} ({d['commit'][:7]})" for d in deploys))
    chatter(log, rng, pool, 2, 4)
    log.user(
        pick(
            rng,
            f"The one {culprit_author} shipped just before it started, check its logs.",
            f"I bet it's {culprit_author}'s deploy. Logs?",
        )
    )
    logs: dict[str, Any] = {
        "lines": [
            {
                "ts": f"{began[:17]}{s:02d}Z",
                "level": "error",
                "request_id": f"req-{code(rng, 12).lower()}",
                "trace_id": code(rng, 16).lower(),
                "msg": f"{alerts[0]['labels']['error_code']} calling {rng.choice(['tax-svc', 'pricing', 'ledger'])}",
                "version": culprit["version"],
            }
            for s in sorted(rng.sample(range(60), rng.randint(24, 40)))
        ]
    }
    log.call(("get_logs", {"service": service, "region": region, "since": began, "query": "level:error"}, logs))
    others = [r for r in REGIONS if r != region]
    log.call(
        *(
            (
                "query_metrics",
                {"service": service, "metric": "http_5xx_rate", "window": "30m", "region": other},
                {
                    **metrics,
                    "region": other,
                    "series": [{"ts": p["ts"], "value": round(rng.uniform(0, 0.2), 2)} for p in metrics["series"]],
                },
            )
            for other in others
        ),
        thought="Checking whether the other regions see it too.",
    )
    log.say(
        f"All errors come from {culprit['version']}; the previous version "
        f"{previous['version']} shows none. Rolling back to {previous['deploy_id']} would be the move. Go?"
    )
    log.user("Go.")
    change = f"CHG-{digits(rng, 5)}"
    log.call(
        (
            "rollback",
            {"service": service, "region": region, "to_deploy_id": previous["deploy_id"]},
            f"Error: change freeze in effect for {region}; pass override_ticket (CHG-) to proceed",
        )
    )
    log.say("There's a change freeze in that region. I need an approved change ticket to override it.")
    log.user(pick(rng, f"Use {change}, it's the emergency one.", f"Emergency change is {change}."))
    log.call(
        (
            "rollback",
            {"service": service, "region": region, "to_deploy_id": previous["deploy_id"], "override_ticket": change},
            {
                "rollback_id": f"rb-{code(rng, 6).lower()}",
                "status": "in_progress",
                "target": {
                    "deploy_id": previous["deploy_id"],
                    "commit": previous["commit"],
                    "version": previous["version"],
                },
            },
        ),
        retry=True,
    )
    log.say("Rollback in progress.")
    log.call(
        (
            "update_incident",
            {
                "incident_id": incident_id,
                "status": "mitigating",
                "note": f"Rolling back {service} in {region} to {previous['version']} under {change}",
            },
            {"incident_id": incident_id, "status": "mitigating", "updated_at": f"{began[:11]}{hour:02d}:59:00Z"},
        ),
        ("page_oncall", {"team": owner, "incident_id": incident_id}, {"paged": f"{owner}-primary", "ack": False}),
    )
    log.say(f"Status posted and {owner} on-call paged.")
    chatter(log, rng, pool, 2, 4)
    log.user(pick(rng, "How's the error rate now?", "Is it recovering?"))
    after = {**metrics, "series": [{"ts": p["ts"], "value": round(rng.uniform(0, 0.3), 2)} for p in metrics["series"]]}
    log.call(
        ("query_metrics", {"service": service, "metric": "http_5xx_rate", "window": "30m", "region": region}, after)
    )
    log.say("Back under 0.3% since the rollback finished.")
    log.call(
        (
            "get_incident",
            {"incident_id": incident_id},
            {
                "incident_id": incident_id,
                "status": "monitoring",
                "severity": "SEV1",
                "commander": "you",
                "timeline": [{"at": began, "event": "alerts fired"}, {"event": f"rollback to {previous['deploy_id']}"}],
            },
        )
    )
    chatter(log, rng, pool, 2, 4)
    log.user(
        pick(
            rng,
            "Ok, it's been 30 min clean. Resolve it and file the follow-up.",
            "Close it out. Root cause is the bad deploy.",
        )
    )
    followup = f"JIRA-{digits(rng, 4)}"
    log.call(
        (
            "update_incident",
            {
                "incident_id": incident_id,
                "status": "resolved",
                "root_cause": f"{culprit['version']} ({culprit['commit'][:12]}) by {culprit_author}",
                "mitigation": f"rollback to {previous['deploy_id']}",
                "follow_ups": [followup],
            },
            {"incident_id": incident_id, "status": "resolved"},
        )
    )
    log.say(f"{incident_id} resolved; follow-up {followup} filed for the postmortem.")
    chatter(log, rng, pool, 2, 4)
    log.user(pick(rng, "Draft the postmortem with everything we know.", "Start the postmortem doc please."))
    log.call(
        (
            "create_postmortem",
            {
                "incident_id": incident_id,
                "alerts": [a["alert_id"] for a in alerts],
                "bad_deploy": {
                    "deploy_id": culprit["deploy_id"],
                    "commit": culprit["commit"],
                    "author": culprit_author,
                },
                "rollback_to": previous["deploy_id"],
                "change_ticket": change,
                "started_at": began,
                "follow_ups": [followup],
            },
            {"doc_id": f"PM-{digits(rng, 4)}", "url": f"https://docs.internal/pm/{incident_id}", "status": "draft"},
        )
    )
    log.say("The postmortem draft is up.")
    chatter(log, rng, pool, 2, 3)


# ---------------------------------------------------------------- coding agent

CODE_TASKS = (
    (
        "Invoice totals are off by a cent for EUR invoices.",
        "round",
        "billing/invoice.py",
        "tests/test_invoice.py",
        "test_eur_total_rounding",
    ),
    (
        "The CSV export drops the last row when the file has no trailing newline.",
        "csv.reader",
        "exports/csv_export.py",
        "tests/test_csv_export.py",
        "test_last_row_kept",
    ),
    (
        "Login fails for emails with a plus sign.",
        "normalize_email",
        "accounts/emails.py",
        "tests/test_emails.py",
        "test_plus_addressing",
    ),
    (
        "Timezone is wrong on the weekly report for users in Sydney.",
        "astimezone",
        "reports/weekly.py",
        "tests/test_weekly.py",
        "test_sydney_week_start",
    ),
)
COMMIT_SUBJECTS = (
    "refactor totals",
    "bump deps",
    "add currency table",
    "fix typo in docs",
    "speed up export",
    "handle empty carts",
    "log slow queries",
    "split settings module",
    "drop python 3.9",
    "retry on 429",
    "cache exchange rates",
    "tidy imports",
)
CODE_LINES = (
    "    return ratio",
    "    if not rows:",
    "        continue",
    "    ratio = done / total",
    "def summarize(rows):",
    "    for row in rows:",
    "    total = sum(r.amount for r in rows)",
    "    log.debug('rows=%d', len(rows))",
    "",
)
CODING_CHATTER = (
    (
        "Why not just use Decimal everywhere?",
        "That would be a wider change touching every caller; for this bug "
        "the fix is local, and we can open a follow-up for the broader switch.",
    ),
    (
        "How long do the tests take?",
        "The module's test file ran in a few seconds; the whole suite is slower, so I run the narrow selection first.",
    ),
    (
        "Can you also fix the lint warnings?",
        "I'd keep them out of this change so the diff stays focused; I can do them in a separate commit if you want.",
    ),
    ("Is this covered by CI?", "Yes, the test file runs in CI on every pull request."),
    ("What Python version is this repo on?", "The config targets 3.11; nothing in the fix depends on a newer version."),
    ("hmm ok", "I'll carry on with the fix then."),
    (
        "Did that test ever pass?",
        "According to the history it passed before the change last week, so this looks like a regression.",
    ),
    ("Should we add a regression test?", "Yes, I'll add one that pins the case from the report."),
)


def coding(log: Log, rng: random.Random, language: Language) -> None:
    task, query, path, tests, test_name = rng.choice(CODE_TASKS)
    repo = pick(rng, "acme/shop", "northwind/backend", "globex/platform")
    authors = rng.sample(["dana", "alex", "mo", "yuki", "ravi"], 3)
    culprit = authors[0]
    commits: list[dict[str, Any]] = [
        {
            "sha": _sha(rng),
            "author": author,
            "date": f"2024-0{rng.randint(4, 9)}-{rng.randint(10, 28)}",
            "subject": subject,
        }
        for author, subject in zip(rng.choices(authors, k=9), rng.sample(COMMIT_SUBJECTS, 9))
    ]
    commits[1]["author"] = culprit
    bad = commits[1]
    line = rng.randint(40, 180)
    module = path.rsplit("/", 1)[0]
    matches: list[dict[str, Any]] = [
        {
            "path": p,
            "line": rng.randint(5, 300),
            "text": f"    total = {query}(amount, 2)" if p == path else f"    value = {query}(x)",
        }
        for p in [path, f"{module}/helpers.py", f"{module}/legacy.py", "scripts/backfill.py", f"{module}/__init__.py"][
            : rng.randint(3, 5)
        ]
    ]
    style_row = lambda r: table_row(  # noqa: E731 - one row of the repository map
        pick(r, "billing", "exports", "accounts", "reports", "scripts")
        + "/"
        + pick(r, "core", "api", "models")
        + ".py",
        pick(r, "dana", "alex", "mo", "yuki"),
        pick(r, "pytest", "pytest + hypothesis"),
        f"{r.randint(40, 98)}% covered",
        pick(r, "stable", "hot path", "legacy: avoid"),
    )
    log.system(
        policy("coding", "en", rng, f"## Repository map for {repo} (path, owner, tests, coverage, note)", style_row)
    )
    log.user(
        pick(
            rng, f"{task} Can you fix it?", f"Bug report from support: {task.lower()} Please investigate and open a PR."
        )
    )
    names = (
        "models",
        "views",
        "tasks",
        "utils",
        "helpers",
        "legacy",
        "serializers",
        "forms",
        "admin",
        "signals",
        "api",
    )
    listing = [
        {"path": f"{module}/{name}.py", "size": rng.randint(300, 24000), "sha": _sha(rng)[:12]} for name in names
    ]
    log.call(
        ("list_files", {"path": module}, {"path": module, "files": listing}),
        thought=pick(rng, None, "Looking at the module first."),
    )
    log.call(("search_code", {"query": query, "path": module}, {"matches": matches, "total": len(matches)}))
    log.say(
        pick(
            rng,
            f"{len(matches)} matches; the likely place is {path}. Reading it and its tests.",
            f"{len(matches)} matches. The {query} call in the main module looks suspicious; reading it and its tests.",
        )
    )
    content = "\n".join(
        f"{n}: {'    ' if n % 4 else ''}"
        + rng.choice(
            ["return total", "if currency == EUR:", f"total = {query}(amount, 2)", "lines = []", "for item in items:"]
        )
        for n in range(line - 50, line + 50)
    )
    file_sha = _sha(rng)[:12]
    log.call(
        ("read_file", {"path": path}, {"path": path, "sha": file_sha, "lines": line + 60, "content": content}),
        (
            "read_file",
            {"path": tests},
            {
                "path": tests,
                "sha": _sha(rng)[:12],
                "lines": rng.randint(80, 300),
                "content": "\n\n".join(
                    f"def {name}():\n    assert total_for({rng.sample(range(1, 999), 3)}) == {rng.randint(3, 2000)}"
                    for name in (
                        test_name,
                        "test_defaults",
                        "test_empty",
                        "test_many_lines",
                        "test_currency_table",
                        "test_negative_amounts",
                    )
                ),
            },
        ),
    )
    failed = [
        {
            "test_id": f"{tests}::{test_name}",
            "file": tests,
            "line": rng.randint(10, 90),
            "message": f"AssertionError: assert {money(rng, 100, 999)} == {money(rng, 100, 999)}",
        }
    ]
    log.call(
        (
            "run_tests",
            {"selector": tests},
            {"passed": rng.randint(8, 30), "failed": failed, "duration_s": round(rng.uniform(0.8, 6), 2)},
        )
    )
    log.say(
        pick(
            rng,
            f"One failure: {failed[0]['test_id']}.",
            f"One test fails, the {test_name.removeprefix('test_').replace('_', ' ')} case.",
        )
    )
    chatter(log, rng, CODING_CHATTER, 2, 4)
    log.user(
        pick(
            rng,
            f"I think {culprit}'s change last week broke it. Check the history?",
            f"Was it {culprit}? They touched that file recently.",
        )
    )
    log.call(("git_log", {"path": path, "limit": len(commits)}, {"commits": commits}))
    log.say("\n".join(f"- {c['sha'][:8]} {c['date']} {c['author']}: {c['subject']}" for c in commits))
    log.user(pick(rng, f"Show me {culprit}'s '{bad['subject']}' one.", f"Yes that one from {culprit}, what changed?"))
    log.call(
        (
            "git_show",
            {"sha": bad["sha"]},
            {
                "sha": bad["sha"],
                "author": culprit,
                "files": [
                    {
                        "path": path,
                        "additions": rng.randint(3, 40),
                        "deletions": rng.randint(1, 30),
                        "patch": f"@@ -{line},7 +{line},7 @@\n-    total = {query}(amount * 100) / 100\n"
                        f"+    total = {query}(amount, 2)",
                    }
                ],
            },
        )
    )
    log.say(f"{bad['sha'][:8]} replaced the integer rounding with a float round at line {line}; that's the regression.")
    chatter(log, rng, CODING_CHATTER, 2, 4)
    log.user(pick(rng, "Fix it, minimal change, and add a regression test.", "ok go ahead and patch it"))
    diff = (
        f"--- a/{path}\n+++ b/{path}\n@@ -{line},1 +{line},1 @@\n-    total "
        f"= {query}(amount, 2)\n+    total = quantize_cents(amount)"
    )
    log.call(
        (
            "apply_patch",
            {"path": path, "diff": diff.replace(f"-{line},", f"-{line - 3},")},
            f"Error: hunk 1 failed at line {line - 3}: context does not match",
        )
    )
    log.call(
        (
            "read_file",
            {"path": path, "start": line - 5, "end": line + 5},
            {"path": path, "sha": file_sha, "content": content},
        )
    )
    new_sha = _sha(rng)[:12]
    log.call(("apply_patch", {"path": path, "diff": diff}, {"path": path, "sha": new_sha, "applied": True}), retry=True)
    log.call(
        (
            "apply_patch",
            {
                "path": tests,
                "diff": f"--- a/{tests}\n+++ b/{tests}\n@@ -1,0 +1,4 @@\n+def test_{test_name}_regression():\n"
                "+    assert total_for([0.1, 0.2]) == 0.3",
            },
            {"path": tests, "applied": True},
        )
    )
    log.call(("run_tests", {"selector": failed[0]["test_id"]}, {"passed": 1, "failed": [], "duration_s": 0.4}))
    log.say("The failing test passes now.")
    log.user(pick(rng, "Show me the final diff.", "What does the change look like now?"))
    log.call(
        (
            "git_diff",
            {"paths": [path, tests]},
            {
                "diff": diff
                + "\n"
                + "\n".join(
                    f"+    assert total_for({rng.sample(range(1, 99), 2)}) == {rng.randint(2, 200)}"
                    for _ in range(rng.randint(6, 14))
                )
            },
        )
    )
    log.say("That's the whole change: one line in the module and the regression test.")
    chatter(log, rng, CODING_CHATTER, 2, 3)
    log.call(
        (
            "run_tests",
            {"selector": tests},
            {"passed": rng.randint(9, 31), "failed": [], "duration_s": round(rng.uniform(0.8, 6), 2)},
        )
    )
    branch = f"fix/{test_name.removeprefix('test_').replace('_', '-')}"
    log.user(pick(rng, "Nice. Open a PR.", "Great, PR please, against main."))
    log.call(("create_branch", {"name": branch, "from": "main"}, {"name": branch, "head": new_sha}))
    log.call(
        (
            "commit",
            {
                "branch": branch,
                "paths": [path, tests],
                "message": f"Fix regression from {bad['sha'][:8]}: {task.split('.')[0].lower()}",
            },
            {"sha": _sha(rng), "branch": branch},
        )
    )
    number = rng.randint(1200, 4800)
    log.call(
        (
            "open_pull_request",
            {
                "repo": repo,
                "branch": branch,
                "base": "main",
                "title": f"Fix: {task.split('.')[0].lower()}",
                "body": f"Reverts the rounding change of {bad['sha'][:8]} in {path}; "
                f"adds {tests}::test_{test_name}_regression.",
            },
            {"number": number, "url": f"https://github.example/{repo}/pull/{number}", "state": "open"},
        )
    )
    log.say(f"PR #{number} is open.")
    log.user(
        pick(
            rng,
            f"Can you also check {matches[1]['path']}? Same pattern there.",
            f"What about the match in {matches[-1]['path']}?",
        )
    )
    other = matches[1] if rng.random() < 0.5 else matches[-1]
    around = "\n".join(
        f"{n}: {other['text'] if n == other['line'] else rng.choice(CODE_LINES)}"
        for n in range(max(1, other["line"] - 25), other["line"] + 25)
    )
    log.call(("read_file", {"path": other["path"]}, {"path": other["path"], "sha": _sha(rng)[:12], "content": around}))
    log.say(f"{other['path']} line {other['line']} rounds a ratio, not money, so it's fine as it is.")
    chatter(log, rng, CODING_CHATTER, 2, 4)
    log.user(pick(rng, "Run the whole suite once to be safe.", "Full test run please before I review."))
    suite: dict[str, Any] = {
        "passed": rng.randint(400, 1500),
        "failed": [
            {
                "test_id": f"tests/test_{rng.choice(['search', 'mail', 'sync'])}.py::test_flaky_{code(rng, 4).lower()}",
                "message": "TimeoutError",
            }
        ],
        "skipped": rng.randint(3, 40),
    }
    log.call(("run_tests", {"selector": "tests/"}, suite))
    log.say(
        f"{suite['passed']} passed; one unrelated timeout in {suite['failed'][0]['test_id']} that also fails on main."
    )
    log.user(pick(rng, "Ok. Rerun just that flaky one.", "rerun the timeout one"))
    log.call(("run_tests", {"selector": suite["failed"][0]["test_id"]}, {"passed": 1, "failed": [], "duration_s": 2.1}))
    log.say("It passes on rerun: flaky, unrelated to this change.")
    log.user(pick(rng, f"Add a comment on PR #{number} saying so.", "Note that on the PR."))
    log.call(
        (
            "comment_pull_request",
            {
                "repo": repo,
                "number": number,
                "body": f"Full suite green except the flaky {suite['failed'][0]['test_id']}, which passes on rerun.",
            },
            {"id": int(digits(rng, 9)), "url": f"https://github.example/{repo}/pull/{number}#issuecomment"},
        )
    )
    log.say("Commented.")
    chatter(log, rng, CODING_CHATTER, 2, 3)


BUILDERS: dict[tuple[str, Language], Callable[[Log, random.Random, Language], None]] = {
    ("travel", "en"): travel_en,
    ("travel", "zh"): travel_zh,
    ("retail", "en"): retail,
    ("telecom", "en"): telecom,
    ("banking", "en"): banking,
    ("incident", "en"): incident,
    ("coding", "en"): coding,
}
