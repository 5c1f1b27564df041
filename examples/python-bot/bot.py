#!/usr/bin/env python3
"""A complete hakem bot in Python: it plays random legal moves.

It needs no rules engine of its own: it joins with "legal_moves": true, and the server sends it
a fresh `state` with the list of legal moves each time it is its turn.

    pip install websockets
    python3 bot.py --match MATCH_ID --token SEAT_TOKEN [--server ws://127.0.0.1:8080/ws]

It readies itself for every set, plays until the round ends, prints the result and exits 0.
"""

import argparse
import asyncio
import json
import random
import sys

from websockets.asyncio.client import connect


async def play(server, match, token, seed):
    rng = random.Random(seed)
    async with connect(server) as ws:

        async def send(message):
            await ws.send(json.dumps(message))

        await send({"type": "hello", "protocol": 1, "client": "python-random-bot/1"})
        welcome = json.loads(await ws.recv())
        if welcome.get("type") != "welcome":
            print(f"no welcome: {welcome}", file=sys.stderr)
            return 1
        await send({"type": "join", "match": match, "seat_token": token,
                    "legal_moves": True, "id": "join"})
        me = None          # our seat, p1 or p2, from the first state
        readied_for = -1   # the set number we last sent `ready` after

        async for text in ws:
            message = json.loads(text)
            kind = message.get("type")

            if kind == "error":
                print(f"server: {message['code']}: {message['message']}", file=sys.stderr)
                if message.get("re") == "join":
                    return 1
                continue

            if kind == "state":
                me = message.get("you", me)
                status = message["status"]
                if status == "finished":
                    print(f"round over: {json.dumps(message['round'])}")
                    return 0
                if status in ("waiting", "between_sets") and readied_for != message["set"]:
                    readied_for = message["set"]
                    await send({"type": "ready", "match": match})
                position = message["position"]
                legal = position.get("legal_moves") or []
                if (status == "playing" and position["to_move"] == me and legal
                        and position["awaiting_press"] is None and position["pending"] is None):
                    await send({"type": "move", "match": match, "move": rng.choice(legal)})
                continue

            if kind == "event":
                event = message["event"]
                if event["kind"] == "set_ended":
                    print(f"set {event['set']}: {event['result']} ({event['reason']})")
                elif event["kind"] == "round_ended":
                    print(f"round over: {event['winner']} wins" if event["winner"] != "draw"
                          else "round over: draw")
                    return 0
                # Between sets, say ready once per set (the round may also be over: then the
                # server answers set_over, which the round_ended event that follows explains).
                if event["kind"] == "set_ended" and readied_for != event["set"]:
                    readied_for = event["set"]
                    await send({"type": "ready", "match": match})
    print("connection closed before the round ended", file=sys.stderr)
    return 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="ws://127.0.0.1:8080/ws")
    parser.add_argument("--match", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    sys.exit(asyncio.run(play(args.server, args.match, args.token, args.seed)))


if __name__ == "__main__":
    main()
