"""The arena client library's C ABI for Python, with ctypes (standard library only).

One to one with include/hightick_arena_client.h: the records as ctypes
structures, the calls with their argument types, and `ArenaClient`, a thin
wrapper whose methods raise `HightickError` (the status and the library's
words) on an error. For test tools and bots; `bot.py` is an example.

    import hightick_arena as ha
    lib = ha.load()                      # $HIGHTICK_ARENA_LIB, else the platform's name
    client = ha.ArenaClient.connect(lib, token_bytes, ha.now_us())
    client.start_prediction("dust_corners")
    while playing:
        client.update(ha.now_us())
        ...
    client.close()

The library is found at the path given to `load`, else at $HIGHTICK_ARENA_LIB,
else by the dynamic loader under its platform's name
(libhightick_arena_client.so / .dylib, hightick_arena_client.dll).
"""

import ctypes
import os
import sys
import time

# HIGHTICK_ABI_VERSION of the header these declarations follow.
ABI_VERSION = 3
# HIGHTICK_LAST_ERROR_BYTES.
LAST_ERROR_BYTES = 256

# HightickStatus.
OK = 0
EMPTY = 1
NULL_POINTER = -1
BUFFER_TOO_SMALL = -2
INVALID_ARGUMENT = -3
INVALID_TOKEN = -4
TOKEN_EXPIRED = -5
CLOSED = -6
INVALID_HANDLE = -7
BUSY = -8
NOT_CONNECTED = -9
IO = -10
PANIC = -11
TOO_MANY_HANDLES = -12
NOT_PREDICTING = -13

# HightickConnection.
STATE_CONNECTING, STATE_CONNECTED, STATE_DISCONNECTED = 0, 1, 2
REASON_NONE, REASON_CLOSED_LOCALLY, REASON_CLOSED_BY_SERVER = 0, 1, 2
REASON_TIMED_OUT, REASON_DENIED, REASON_CONNECT_TIMED_OUT, REASON_TOKEN_EXPIRED = 3, 4, 5, 6

# HightickArenaInput.buttons.
BUTTON_FIRE, BUTTON_ALT_FIRE, BUTTON_JUMP, BUTTON_CROUCH = 1 << 0, 1 << 1, 1 << 2, 1 << 3
BUTTON_WALK, BUTTON_RELOAD, BUTTON_USE, BUTTON_BUY = 1 << 4, 1 << 5, 1 << 6, 1 << 7
BUTTON_DROP, BUTTON_INSPECT, BUTTON_SCOREBOARD = 1 << 8, 1 << 9, 1 << 10

# HightickArenaEntity.kind and .has.
KIND_PLAYER, KIND_WALLET = 0, 1
HAS_TRANSFORM, HAS_VITALS, HAS_MONEY = 1 << 0, 1 << 1, 1 << 2

# HightickArenaEvent.kind.
EVENT_ROUND_START, EVENT_ROUND_END, EVENT_SHOT_HIT, EVENT_KILL = 0, 1, 2, 3
EVENT_PURCHASE, EVENT_PLAYER_JOINED, EVENT_PLAYER_LEFT = 4, 5, 6
EVENT_MATCH_END, EVENT_WELCOME = 7, 8

f32x3 = ctypes.c_float * 3


class Config(ctypes.Structure):
    """HightickConfig: settings of a connection."""
    _fields_ = [("tick_rate_hz", ctypes.c_uint32), ("max_entities", ctypes.c_uint32),
                ("event_capacity", ctypes.c_uint32)]


class Stats(ctypes.Structure):
    """HightickStats: the connection's measurements and counters."""
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "snapshots_applied", "snapshots_dropped", "full_resyncs", "decode_errors", "events",
        "events_dropped", "inputs_sent", "packets_in", "packets_out", "bytes_in", "bytes_out",
        "send_errors")] + [(name, ctypes.c_float) for name in (
            "rtt_ms", "rtt_variation_ms", "packet_loss", "jitter_ms", "snapshot_age_ms")]


class TickSync(ctypes.Structure):
    """HightickTickSync: the server's clock as the client knows it."""
    _fields_ = [("server_tick", ctypes.c_double), ("clock_offset_us", ctypes.c_double),
                ("snapshot_tick", ctypes.c_uint32), ("tick_rate_hz", ctypes.c_uint32)]


class Connection(ctypes.Structure):
    """HightickConnection: the STATE_* and, once disconnected, the REASON_*."""
    _fields_ = [("state", ctypes.c_uint8), ("reason", ctypes.c_uint8)]


class SnapshotInfo(ctypes.Structure):
    """HightickSnapshotInfo."""
    _fields_ = [("server_tick", ctypes.c_uint32), ("entity_count", ctypes.c_uint32),
                ("snapshots_applied", ctypes.c_uint64)]


class ArenaInput(ctypes.Structure):
    """HightickArenaInput: one tick of the player's input (yaw 0 looks along +z)."""
    _fields_ = [("yaw", ctypes.c_float), ("pitch", ctypes.c_float),
                ("buttons", ctypes.c_uint16), ("move_x", ctypes.c_int8),
                ("move_y", ctypes.c_int8), ("weapon_slot", ctypes.c_uint8)]


class ArenaEntity(ctypes.Structure):
    """HightickArenaEntity: one entity's state (`has` says which fields are set)."""
    _fields_ = [("position", f32x3), ("yaw", ctypes.c_float), ("pitch", ctypes.c_float),
                ("crouch", ctypes.c_float), ("money", ctypes.c_uint32), ("id", ctypes.c_uint16),
                ("kind", ctypes.c_uint8), ("has", ctypes.c_uint8), ("health", ctypes.c_uint8),
                ("armor", ctypes.c_uint8), ("weapon", ctypes.c_uint8), ("alive", ctypes.c_uint8),
                ("team", ctypes.c_uint8)]


class ArenaEvent(ctypes.Structure):
    """HightickArenaEvent: one event; the header says which kinds set each field."""
    _fields_ = [(name, ctypes.c_uint8) for name in (
        "kind", "team", "phase", "reason", "headshot", "weapon", "item", "reserved")] + [
        (name, ctypes.c_uint16) for name in ("round", "damage", "player", "target")] + [
        ("score", ctypes.c_uint16 * 2), ("tick", ctypes.c_uint32), ("cost", ctypes.c_uint32),
        ("balance", ctypes.c_uint32)]


class Prediction(ctypes.Structure):
    """HightickPrediction: the local player as predicted (position: where to draw it)."""
    _fields_ = [("tick", ctypes.c_uint32), ("entity", ctypes.c_uint32),
                ("position", f32x3), ("predicted", f32x3)]


class PredictionStats(ctypes.Structure):
    """HightickPredictionStats: what the local player's predictor counted."""
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "compared", "mispredicted", "resets", "replayed")] + [(name, ctypes.c_float) for name in (
            "last_correction_m", "mean_correction_m", "p99_correction_m", "max_correction_m")]


# Each record's size in the header (a change there is an ABI version bump).
SIZES = {Config: 12, Stats: 120, TickSync: 24, Connection: 2, SnapshotInfo: 16,
         ArenaInput: 16, ArenaEntity: 40, ArenaEvent: 32, Prediction: 32, PredictionStats: 48}

_P = ctypes.POINTER
_SIGNATURES = {
    "hightick_abi_version": (ctypes.c_uint32, []),
    "hightick_status_text": (ctypes.c_char_p, [ctypes.c_int32]),
    "hightick_last_error": (ctypes.c_int32, [ctypes.c_char_p, ctypes.c_size_t,
                                             _P(ctypes.c_size_t)]),
    "hightick_config_default": (ctypes.c_int32, [_P(Config)]),
    "hightick_connect": (ctypes.c_int32, [ctypes.c_char_p, ctypes.c_size_t, _P(Config),
                                          ctypes.c_uint64, _P(ctypes.c_uint64)]),
    "hightick_update": (ctypes.c_int32, [ctypes.c_uint64, ctypes.c_uint64]),
    "hightick_send_input": (ctypes.c_int32, [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32,
                                             _P(ArenaInput)]),
    "hightick_poll_snapshot": (ctypes.c_int32, [ctypes.c_uint64, _P(SnapshotInfo),
                                                _P(ArenaEntity), ctypes.c_size_t,
                                                _P(ctypes.c_size_t)]),
    "hightick_poll_events": (ctypes.c_int32, [ctypes.c_uint64, _P(ArenaEvent), ctypes.c_size_t,
                                              _P(ctypes.c_size_t)]),
    "hightick_entity": (ctypes.c_int32, [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_double,
                                         _P(ArenaEntity)]),
    "hightick_avatar": (ctypes.c_int32, [ctypes.c_uint64, _P(ctypes.c_uint32)]),
    "hightick_stats": (ctypes.c_int32, [ctypes.c_uint64, _P(Stats)]),
    "hightick_tick_sync": (ctypes.c_int32, [ctypes.c_uint64, _P(TickSync)]),
    "hightick_connection": (ctypes.c_int32, [ctypes.c_uint64, _P(Connection)]),
    "hightick_disconnect": (ctypes.c_int32, [ctypes.c_uint64]),
    "hightick_close": (ctypes.c_int32, [ctypes.c_uint64]),
    "hightick_prediction_start": (ctypes.c_int32, [ctypes.c_uint64, ctypes.c_char_p]),
    "hightick_prediction": (ctypes.c_int32, [ctypes.c_uint64, _P(Prediction)]),
    "hightick_predicted_entity": (ctypes.c_int32, [ctypes.c_uint64, _P(ArenaEntity)]),
    "hightick_prediction_stats": (ctypes.c_int32, [ctypes.c_uint64, _P(PredictionStats)]),
    "hightick_prediction_smoothing": (ctypes.c_int32, [ctypes.c_uint64, ctypes.c_float]),
}


def _default_name():
    if sys.platform == "win32":
        return "hightick_arena_client.dll"
    if sys.platform == "darwin":
        return "libhightick_arena_client.dylib"
    return "libhightick_arena_client.so"


def load(path=None):
    """Loads the library, declares its calls and checks it fits these declarations."""
    lib = ctypes.CDLL(path or os.environ.get("HIGHTICK_ARENA_LIB") or _default_name())
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    abi = lib.hightick_abi_version()
    if abi != ABI_VERSION:
        raise RuntimeError(f"native library ABI {abi}, these declarations ABI {ABI_VERSION}")
    for record, size in SIZES.items():
        if ctypes.sizeof(record) != size:
            raise RuntimeError(f"{record.__name__} is {ctypes.sizeof(record)} bytes here, "
                               f"{size} in the header")
    return lib


def now_us():
    """Microseconds on a monotonic clock (the caller's clock the library reads)."""
    return time.monotonic_ns() // 1000


class HightickError(Exception):
    """A call failed: `status` and the library's words for why."""

    def __init__(self, lib, call, status):
        name = lib.hightick_status_text(status).decode()
        super().__init__(f"{call}: {name} ({status}): {last_error(lib)}")
        self.status = status


def last_error(lib):
    """The calling thread's last error, in words."""
    text = ctypes.create_string_buffer(LAST_ERROR_BYTES + 1)
    if lib.hightick_last_error(text, len(text), None) != OK:
        return ""
    return text.value.decode("utf-8", "replace")


class ArenaClient:
    """A connection to an arena match, pumped by `update` once per frame on one thread."""

    def __init__(self, lib, handle, max_entities=256, max_events=64):
        self.lib = lib
        self.handle = handle
        # The caller's buffers, allocated once.
        self.entities = (ArenaEntity * max_entities)()
        self.events = (ArenaEvent * max_events)()
        self._count = ctypes.c_size_t()
        self._info = SnapshotInfo()

    def _check(self, call, status):
        if status < 0:
            raise HightickError(self.lib, call, status)
        return status

    @classmethod
    def connect(cls, lib, token, now, config=None):
        """Connects with a connect token (the 2048 bytes the gateway hands out)."""
        handle = ctypes.c_uint64()
        cfg = ctypes.byref(config) if config is not None else None
        status = lib.hightick_connect(token, len(token), cfg, now, ctypes.byref(handle))
        if status < 0:
            raise HightickError(lib, "connect", status)
        return cls(lib, handle.value)

    def update(self, now):
        """The frame's network work: receive, timers, send (and reconcile the prediction)."""
        self._check("update", self.lib.hightick_update(self.handle, now))

    def send_input(self, tick, aim_tick, input_record):
        """Sends the frame's input for server tick `tick`; False until connected."""
        status = self.lib.hightick_send_input(self.handle, tick, aim_tick,
                                              ctypes.byref(input_record))
        if status == NOT_CONNECTED:
            return False
        self._check("send_input", status)
        return True

    def poll_events(self):
        """The events received since, oldest first (a list of ArenaEvent)."""
        out = []
        while True:
            status = self.lib.hightick_poll_events(self.handle, self.events, len(self.events),
                                                   ctypes.byref(self._count))
            if self._check("poll_events", status) == EMPTY:
                return out
            n = self._count.value
            out.extend(ArenaEvent.from_buffer_copy(e) for e in self.events[:n])
            if n < len(self.events):
                return out

    def poll_snapshot(self):
        """(info, entities) if a snapshot arrived since the last call, else None."""
        status = self.lib.hightick_poll_snapshot(self.handle, ctypes.byref(self._info),
                                                 self.entities, len(self.entities),
                                                 ctypes.byref(self._count))
        if self._check("poll_snapshot", status) == EMPTY:
            return None
        entities = [ArenaEntity.from_buffer_copy(e) for e in self.entities[:self._count.value]]
        return SnapshotInfo.from_buffer_copy(self._info), entities

    def _read(self, call, fn, record, *args):
        status = fn(self.handle, *args, ctypes.byref(record))
        return None if self._check(call, status) == EMPTY else record

    def entity(self, entity_id, render_tick):
        """Entity `entity_id` interpolated at server tick `render_tick`, or None if not held."""
        return self._read("entity", self.lib.hightick_entity, ArenaEntity(), entity_id,
                          render_tick)

    def avatar(self):
        """The id of the entity this player steers (its avatar), or None while it has none."""
        raw = self._read("avatar", self.lib.hightick_avatar, ctypes.c_uint32())
        return None if raw is None else raw.value

    def tick_sync(self):
        """The server's tick and clock offset, or None before the first snapshot."""
        return self._read("tick_sync", self.lib.hightick_tick_sync, TickSync())

    def stats(self):
        """RTT, loss, jitter, snapshot age and counters."""
        return self._read("stats", self.lib.hightick_stats, Stats())

    def connection(self):
        """Connecting, connected, or disconnected and why."""
        return self._read("connection", self.lib.hightick_connection, Connection())

    def start_prediction(self, stage=None):
        """Predicts the local player on map `stage` (None: "dust_corners") from now on."""
        name = stage.encode() if stage is not None else None
        self._check("prediction_start", self.lib.hightick_prediction_start(self.handle, name))

    def prediction(self):
        """The local player as predicted (Prediction), or None before its first state."""
        return self._read("prediction", self.lib.hightick_prediction, Prediction())

    def predicted_entity(self):
        """The local player's entity at its predicted (drawn) position, or None."""
        return self._read("predicted_entity", self.lib.hightick_predicted_entity, ArenaEntity())

    def prediction_stats(self):
        """Comparisons, mispredictions and corrections of the prediction."""
        return self._read("prediction_stats", self.lib.hightick_prediction_stats,
                          PredictionStats())

    def set_smoothing(self, smoothing):
        """Share of a correction still drawn after each tick (0.8 default; 0: at once)."""
        self._check("prediction_smoothing",
                    self.lib.hightick_prediction_smoothing(self.handle, smoothing))

    def disconnect(self):
        """Closes the connection; the client stays readable until `close`."""
        self._check("disconnect", self.lib.hightick_disconnect(self.handle))

    def close(self):
        """Disconnects and frees the handle."""
        if self.handle:
            self.lib.hightick_close(self.handle)
            self.handle = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
