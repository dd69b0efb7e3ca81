"""A Python bot of the arena over the C ABI, the same play as c/play.c: connects
with a connect token, runs forward for a few seconds (turning slowly)
predicting its own player, disconnects.

Run with (from the workspace root, after `cargo build -p hightick-client-ffi-arena`):
    HIGHTICK_ARENA_LIB=target/debug/libhightick_arena_client.so \\
        python3 crates/client-ffi-arena/python/bot.py TOKEN_FILE SECONDS

It prints what it saw as `key value` lines and exits 0 if it connected,
received snapshots and closed cleanly.
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hightick_arena as ha  # noqa: E402

# Inputs are sent for a few ticks ahead of the server's estimate.
INPUT_LEAD_TICKS = 6
# Other entities are drawn this many ticks in the past, between snapshots.
INTERPOLATION_TICKS = 3.0
# The match's map: what the player's movement is predicted on.
MAP = "dust_corners"


def distance(a, b):
    return math.sqrt(sum((a[k] - b[k]) ** 2 for k in range(3)))


def play(lib, token, seconds):
    snapshots = events_seen = 0
    me = -1
    start = last = None
    last_tick_sent = 0
    predicted_start = predicted_last = None
    predicted_frames = 0
    predicted_finite = entity_matches = True
    gaps = []
    with ha.ArenaClient.connect(lib, token, ha.now_us()) as client:
        client.start_prediction(MAP)
        client.set_smoothing(0.8)  # the default; 0 draws corrections at once
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            client.update(ha.now_us())
            for event in client.poll_events():
                events_seen += 1
                if event.kind == ha.EVENT_WELCOME:
                    me = event.player
            if client.poll_snapshot() is not None:
                snapshots += 1
            sync = client.tick_sync()
            if sync is not None:
                body = client.entity(me, sync.server_tick - INTERPOLATION_TICKS) if me >= 0 else None
                if body is not None and body.has & ha.HAS_TRANSFORM:
                    position = tuple(body.position)
                    start = start or position
                    last = position
                    predicted = client.prediction()
                    if predicted is not None:
                        drawn = tuple(predicted.position)
                        predicted_finite &= all(math.isfinite(v) for v in drawn)
                        predicted_start = predicted_start or drawn
                        predicted_last = drawn
                        predicted_frames += 1
                        gaps.append(distance(drawn, position))
                        own = client.predicted_entity()
                        entity_matches &= (own is not None and own.id == me
                                           and tuple(own.position) == drawn)
                tick = int(sync.server_tick) + INPUT_LEAD_TICKS
                if tick > last_tick_sent:
                    command = ha.ArenaInput(move_y=127, yaw=(tick % 1024) * 0.01)
                    aim = sync.server_tick - INTERPOLATION_TICKS
                    client.send_input(tick, max(int(aim), 0), command)
                    last_tick_sent = tick
            time.sleep(0.004)
        stats = client.stats()
        avatar = client.avatar()
        prediction = client.prediction_stats()
        before = client.connection()
        client.disconnect()
        after = client.connection()
        handle = client.handle
    # The handle is gone: calls with it are refused, never a crash.
    if lib.hightick_update(handle, ha.now_us()) != ha.CLOSED:
        print("update on a closed handle was not refused", file=sys.stderr)
        return 1
    gaps.sort()
    origin = (0.0, 0.0, 0.0)
    print(f"snapshots {snapshots}")
    print(f"snapshots_applied {stats.snapshots_applied}")
    print(f"events {events_seen}")
    print(f"inputs_sent {stats.inputs_sent}")
    print(f"welcome {me}")
    print(f"avatar {-1 if avatar is None else avatar}")
    print(f"moved {distance(start or origin, last or origin):.3f}")
    print(f"rtt_ms {stats.rtt_ms:.3f}")
    print(f"jitter_ms {stats.jitter_ms:.3f}")
    print(f"predicted_frames {predicted_frames}")
    print(f"predicted_finite {int(predicted_finite)}")
    print(f"predicted_moved {distance(predicted_start or origin, predicted_last or origin):.3f}")
    print(f"predicted_entity_matches {int(entity_matches and predicted_frames > 0)}")
    print(f"prediction_gap_median_m {gaps[len(gaps) // 2] if gaps else -1.0:.3f}")
    print(f"prediction_gap_max_m {gaps[-1] if gaps else -1.0:.3f}")
    print(f"prediction_compared {prediction.compared}")
    print(f"prediction_mispredicted {prediction.mispredicted}")
    print(f"prediction_max_correction_m {prediction.max_correction_m:.3f}")
    connected = before.state == ha.STATE_CONNECTED
    closed_locally = (after.state == ha.STATE_DISCONNECTED
                      and after.reason == ha.REASON_CLOSED_LOCALLY)
    print(f"connected_before_disconnect {int(connected)}")
    print(f"closed_locally {int(closed_locally)}")
    return 0 if snapshots > 0 and connected else 1


def main(argv):
    if len(argv) != 3:
        print("usage: bot.py TOKEN_FILE SECONDS", file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        token = f.read()
    lib = ha.load()
    try:
        return play(lib, token, float(argv[2]))
    except ha.HightickError as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
