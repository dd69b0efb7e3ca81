// The arena client library's C ABI for C#: blittable records and P/Invoke
// declarations, one to one with include/hightick_arena_client.h. This is the
// layer Unity (Mono or IL2CPP) loads; HightickClient.cs wraps it.
//
// The native library is libhightick_arena_client (.so, .dylib, .dll). On iOS
// (IL2CPP) it is linked statically into the player: define UNITY_IOS and the
// calls bind to "__Internal" (docs/ENGINE_CLIENTS.md).

using System;
using System.Runtime.InteropServices;

namespace Hightick
{
    /// <summary>What every call returns (HightickStatus).</summary>
    public enum Status : int
    {
        Ok = 0,
        Empty = 1,
        NullPointer = -1,
        BufferTooSmall = -2,
        InvalidArgument = -3,
        InvalidToken = -4,
        TokenExpired = -5,
        Closed = -6,
        InvalidHandle = -7,
        Busy = -8,
        NotConnected = -9,
        Io = -10,
        Panic = -11,
        TooManyHandles = -12,
        NotPredicting = -13,
    }

    /// <summary>HightickConfig: settings of a connection.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Config
    {
        public uint TickRateHz;
        public uint MaxEntities;
        public uint EventCapacity;
    }

    /// <summary>HightickStats: the connection's measurements and counters.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Stats
    {
        public ulong SnapshotsApplied;
        public ulong SnapshotsDropped;
        public ulong FullResyncs;
        public ulong DecodeErrors;
        public ulong Events;
        public ulong EventsDropped;
        public ulong InputsSent;
        public ulong PacketsIn;
        public ulong PacketsOut;
        public ulong BytesIn;
        public ulong BytesOut;
        public ulong SendErrors;
        public float RttMs;
        public float RttVariationMs;
        public float PacketLoss;
        public float JitterMs;
        /// <summary>Negative before the first snapshot.</summary>
        public float SnapshotAgeMs;
    }

    /// <summary>HightickTickSync: the server's clock as the client knows it.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TickSync
    {
        public double ServerTick;
        public double ClockOffsetUs;
        public uint SnapshotTick;
        public uint TickRateHz;
    }

    /// <summary>HightickConnection: the connection's state.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Connection
    {
        public const byte Connecting = 0, Connected = 1, Disconnected = 2;
        public const byte ReasonNone = 0, ClosedLocally = 1, ClosedByServer = 2, TimedOut = 3,
            Denied = 4, ConnectTimedOut = 5, TokenExpired = 6;
        public byte State;
        public byte Reason;
    }

    /// <summary>HightickSnapshotInfo.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct SnapshotInfo
    {
        public uint ServerTick;
        public uint EntityCount;
        public ulong SnapshotsApplied;
    }

    /// <summary>HightickArenaInput: one tick of the player's input.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ArenaInput
    {
        public const ushort Fire = 1 << 0, AltFire = 1 << 1, Jump = 1 << 2, Crouch = 1 << 3,
            Walk = 1 << 4, Reload = 1 << 5, Use = 1 << 6, Buy = 1 << 7, Drop = 1 << 8,
            Inspect = 1 << 9, Scoreboard = 1 << 10;
        /// <summary>Radians, finite. Yaw 0 looks along +z.</summary>
        public float Yaw;
        /// <summary>Radians, finite. Positive looks up.</summary>
        public float Pitch;
        /// <summary>The button constants above, or'ed.</summary>
        public ushort Buttons;
        /// <summary>Strafe, -127..127.</summary>
        public sbyte MoveX;
        /// <summary>Forward (+) / back (-), -127..127.</summary>
        public sbyte MoveY;
        /// <summary>0..15.</summary>
        public byte WeaponSlot;
    }

    /// <summary>HightickArenaEntity: one entity's state.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ArenaEntity
    {
        public const byte KindPlayer = 0, KindWallet = 1;
        public const byte HasTransform = 1 << 0, HasVitals = 1 << 1, HasMoney = 1 << 2;
        /// <summary>Feet position, metres, Y up.</summary>
        public float X, Y, Z;
        public float Yaw;
        public float Pitch;
        public float Crouch;
        public uint Money;
        public ushort Id;
        public byte Kind;
        /// <summary>The Has* bits: which fields below are set.</summary>
        public byte Has;
        public byte Health;
        public byte Armor;
        public byte Weapon;
        public byte Alive;
        public byte Team;
    }

    /// <summary>HightickArenaEvent: one event; each field says which kinds set it.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ArenaEvent
    {
        public const byte RoundStart = 0, RoundEnd = 1, ShotHit = 2, Kill = 3, Purchase = 4,
            PlayerJoined = 5, PlayerLeft = 6, MatchEnd = 7, Welcome = 8;
        public const byte TeamAttackers = 0, TeamDefenders = 1, TeamNone = 255;
        public byte Kind;
        public byte Team;
        public byte Phase;
        public byte Reason;
        public byte Headshot;
        public byte Weapon;
        public byte Item;
        public byte Reserved;
        public ushort Round;
        public ushort Damage;
        public ushort Player;
        public ushort Target;
        public ushort ScoreAttackers;
        public ushort ScoreDefenders;
        public uint Tick;
        public uint Cost;
        public uint Balance;
    }

    /// <summary>HightickPrediction: the local player as predicted.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Prediction
    {
        /// <summary>The newest server tick predicted (the newest input's tick).</summary>
        public uint Tick;
        /// <summary>The local player's entity id.</summary>
        public uint Entity;
        /// <summary>Where to draw the player (prediction plus what is left of a correction), metres, Y up.</summary>
        public float X, Y, Z;
        /// <summary>The prediction itself, without smoothing.</summary>
        public float PredictedX, PredictedY, PredictedZ;
    }

    /// <summary>HightickPredictionStats: what the local player's predictor counted.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct PredictionStats
    {
        /// <summary>Authoritative states compared with the prediction of their tick.</summary>
        public ulong Compared;
        /// <summary>Of those, the ones that disagreed (each corrected).</summary>
        public ulong Mispredicted;
        /// <summary>Authoritative states taken without comparison (the first, a respawn).</summary>
        public ulong Resets;
        /// <summary>Ticks replayed after corrections.</summary>
        public ulong Replayed;
        public float LastCorrectionM;
        public float MeanCorrectionM;
        public float P99CorrectionM;
        public float MaxCorrectionM;
    }

    /// <summary>The C functions. Sizes are size_t (UIntPtr); handles are ulong.</summary>
    public static class Native
    {
#if UNITY_IOS && !UNITY_EDITOR
        public const string Library = "__Internal";
#else
        public const string Library = "hightick_arena_client";
#endif
        /// <summary>HIGHTICK_ABI_VERSION of the header these declarations follow.</summary>
        public const uint AbiVersion = 2;
        /// <summary>HIGHTICK_LAST_ERROR_BYTES.</summary>
        public const int LastErrorBytes = 256;

        [DllImport(Library)] public static extern uint hightick_abi_version();
        [DllImport(Library)] public static extern IntPtr hightick_status_text(int status);
        [DllImport(Library)] public static extern Status hightick_last_error(byte[] buf, UIntPtr capacity, out UIntPtr outLen);
        [DllImport(Library)] public static extern Status hightick_config_default(out Config config);
        [DllImport(Library)] public static extern Status hightick_connect(byte[] token, UIntPtr tokenLen, ref Config config, ulong nowUs, out ulong client);
        [DllImport(Library)] public static extern Status hightick_update(ulong client, ulong nowUs);
        [DllImport(Library)] public static extern Status hightick_send_input(ulong client, uint tick, uint aimTick, ref ArenaInput input);
        [DllImport(Library)] public static extern Status hightick_poll_snapshot(ulong client, out SnapshotInfo info, [Out] ArenaEntity[] entities, UIntPtr capacity, out UIntPtr count);
        [DllImport(Library)] public static extern Status hightick_poll_events(ulong client, [Out] ArenaEvent[] events, UIntPtr capacity, out UIntPtr count);
        [DllImport(Library)] public static extern Status hightick_entity(ulong client, uint id, double renderTick, out ArenaEntity entity);
        [DllImport(Library)] public static extern Status hightick_stats(ulong client, out Stats stats);
        [DllImport(Library)] public static extern Status hightick_tick_sync(ulong client, out TickSync sync);
        [DllImport(Library)] public static extern Status hightick_connection(ulong client, out Connection connection);
        [DllImport(Library)] public static extern Status hightick_disconnect(ulong client);
        [DllImport(Library)] public static extern Status hightick_close(ulong client);
        [DllImport(Library)] public static extern Status hightick_prediction_start(ulong client, byte[] stage);
        [DllImport(Library)] public static extern Status hightick_prediction(ulong client, out Prediction prediction);
        [DllImport(Library)] public static extern Status hightick_predicted_entity(ulong client, out ArenaEntity entity);
        [DllImport(Library)] public static extern Status hightick_prediction_stats(ulong client, out PredictionStats stats);
        [DllImport(Library)] public static extern Status hightick_prediction_smoothing(ulong client, float smoothing);

        /// <summary>Throws if a record's size differs from the header's (a stale binding).</summary>
        public static void CheckLayout()
        {
            Check("Config", Marshal.SizeOf(typeof(Config)), 12);
            Check("Stats", Marshal.SizeOf(typeof(Stats)), 120);
            Check("TickSync", Marshal.SizeOf(typeof(TickSync)), 24);
            Check("Connection", Marshal.SizeOf(typeof(Connection)), 2);
            Check("SnapshotInfo", Marshal.SizeOf(typeof(SnapshotInfo)), 16);
            Check("ArenaInput", Marshal.SizeOf(typeof(ArenaInput)), 16);
            Check("ArenaEntity", Marshal.SizeOf(typeof(ArenaEntity)), 40);
            Check("ArenaEvent", Marshal.SizeOf(typeof(ArenaEvent)), 32);
            Check("Prediction", Marshal.SizeOf(typeof(Prediction)), 32);
            Check("PredictionStats", Marshal.SizeOf(typeof(PredictionStats)), 48);
            uint abi = hightick_abi_version();
            if (abi != AbiVersion)
            {
                throw new InvalidOperationException(
                    "native library ABI " + abi + ", these declarations ABI " + AbiVersion);
            }
        }

        static void Check(string record, int size, int expected)
        {
            if (size != expected)
            {
                throw new InvalidOperationException(
                    record + " is " + size + " bytes here, " + expected + " in the header");
            }
        }
    }
}
