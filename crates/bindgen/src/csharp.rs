//! The C# binding of a game's C ABI: blittable records, P/Invoke
//! declarations and a wrapper class (`TagClient`), in one file that Unity
//! (Mono or IL2CPP) or any .NET loads. The game's three records come from
//! the [`Model`]; the ABI's own records and calls are the same for every
//! game.

use std::fmt::Write;
use std::mem::size_of;

use hightick_client_ffi::{
    HIGHTICK_ABI_VERSION, HIGHTICK_LAST_ERROR_BYTES, HightickConfig, HightickConnection,
    HightickSnapshotInfo, HightickStats, HightickTickSync,
};

use crate::model::{Model, Record, pascal};

/// The ABI's records, as C# (the same for every game).
const ABI_RECORDS: &str = r#"    /// <summary>What every call returns (HightickStatus).</summary>
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
"#;

/// The wrapper class's body after its constructor; `CLIENT`, `INPUT`,
/// `EVENT` and `ENTITY` stand for the game's names.
const CLIENT_BODY: &str = r#"
        /// <summary>Microseconds on a monotonic clock, for Update and Connect.</summary>
        public static ulong NowMicros()
        {
            return (ulong)(Stopwatch.GetTimestamp() * (1e6 / Stopwatch.Frequency));
        }

        /// <summary>Connects with a connect token (the 2048 bytes the gateway hands out).</summary>
        public static CLIENT Connect(byte[] token, ulong nowUs, Config? config = null)
        {
            Native.CheckLayout();
            Config c;
            if (config.HasValue)
            {
                c = config.Value;
            }
            else
            {
                Check("config_default", Native.hightick_config_default(out c));
            }
            ulong h;
            Check("connect", Native.hightick_connect(token, (UIntPtr)token.Length, ref c, nowUs, out h));
            return new CLIENT(h);
        }

        /// <summary>The frame's network work: receive, timers, send.</summary>
        public void Update(ulong nowUs)
        {
            Check("update", Native.hightick_update(handle, nowUs));
        }

        /// <summary>Sends the frame's input for server tick `tick`; false until connected.</summary>
        public bool SendInput(uint tick, uint aimTick, INPUT input)
        {
            Status s = Native.hightick_send_input(handle, tick, aimTick, ref input);
            if (s == Status.NotConnected)
            {
                return false;
            }
            Check("send_input", s);
            return true;
        }

        /// <summary>Moves received events into `buffer`; returns how many (call again while it fills the buffer).</summary>
        public int PollEvents(EVENT[] buffer)
        {
            UIntPtr n;
            Status s = Native.hightick_poll_events(handle, buffer, (UIntPtr)buffer.Length, out n);
            if (s == Status.Empty)
            {
                return 0;
            }
            Check("poll_events", s);
            return (int)n;
        }

        /// <summary>
        /// If a snapshot arrived since the last call, writes every entity held into
        /// `buffer` and returns their count; -1 if none arrived.
        /// </summary>
        public int PollSnapshot(ENTITY[] buffer, out SnapshotInfo info)
        {
            UIntPtr n;
            Status s = Native.hightick_poll_snapshot(handle, out info, buffer, (UIntPtr)buffer.Length, out n);
            if (s == Status.Empty)
            {
                return -1;
            }
            Check("poll_snapshot", s);
            return (int)n;
        }

        /// <summary>Entity `id` as the newest snapshot has it; false if not held.</summary>
        public bool TryGetEntity(ushort id, out ENTITY entity)
        {
            return Found("entity", Native.hightick_entity(handle, id, -1.0, out entity));
        }

        /// <summary>The server's tick and clock offset; false before the first snapshot.</summary>
        public bool TryGetTickSync(out TickSync sync)
        {
            return Found("tick_sync", Native.hightick_tick_sync(handle, out sync));
        }

        /// <summary>RTT, loss, jitter, snapshot age and counters.</summary>
        public Stats Stats
        {
            get
            {
                Stats stats;
                Check("stats", Native.hightick_stats(handle, out stats));
                return stats;
            }
        }

        /// <summary>Connecting, connected, or disconnected and why.</summary>
        public Connection Connection
        {
            get
            {
                Connection c;
                Check("connection", Native.hightick_connection(handle, out c));
                return c;
            }
        }

        /// <summary>Closes the connection; the client stays readable until disposed.</summary>
        public void Disconnect()
        {
            Check("disconnect", Native.hightick_disconnect(handle));
        }

        /// <summary>Disconnects and frees the handle.</summary>
        public void Dispose()
        {
            if (handle != 0)
            {
                Native.hightick_close(handle);
                handle = 0;
            }
        }

        /// <summary>The calling thread's last error, in words.</summary>
        public static string LastError()
        {
            byte[] text = new byte[Native.LastErrorBytes + 1];
            UIntPtr len;
            if (Native.hightick_last_error(text, (UIntPtr)text.Length, out len) != Status.Ok)
            {
                return "";
            }
            return Encoding.UTF8.GetString(text, 0, (int)len - 1);
        }

        /// <summary>False for EMPTY, true for OK; throws for an error.</summary>
        static bool Found(string call, Status s)
        {
            if (s == Status.Empty)
            {
                return false;
            }
            Check(call, s);
            return true;
        }

        static void Check(string call, Status s)
        {
            if ((int)s < 0)
            {
                throw new HightickException(call, s, LastError());
            }
        }
    }
"#;

/// The C# file (`Hightick<Game>.cs`).
pub(crate) fn emit(m: &Model) -> String {
    let pascal_game = &m.names.pascal;
    let (input, event, entity) = (
        format!("{pascal_game}Input"),
        format!("{pascal_game}Event"),
        format!("{pascal_game}Entity"),
    );
    let client = format!("{pascal_game}Client");
    let mut s = String::new();
    let _ = write!(
        s,
        "\
// {game}'s client library for C#: blittable records, P/Invoke declarations
// and {client}, one to one with lib{lib}'s C ABI.
// Generated by hightick-bindgen from the game's wire schema (hash
// {hash}): do not edit. The game binary's `bindings --out DIR` writes it
// again, with the library's source beside it.
//
// On iOS (IL2CPP) the library is linked statically into the player: define
// UNITY_IOS and the calls bind to \"__Internal\".

using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text;

namespace Hightick.{pascal_game}
{{
{ABI_RECORDS}",
        game = m.game,
        lib = m.names.library,
        hash = m.hash,
    );
    for record in [&m.input.0, &m.event.0, &m.entity.0] {
        record_struct(&mut s, pascal_game, record);
    }
    let _ = write!(
        s,
        r#"
    /// <summary>The C functions. Sizes are size_t (UIntPtr); handles are ulong.</summary>
    public static class Native
    {{
#if UNITY_IOS && !UNITY_EDITOR
        public const string Library = "__Internal";
#else
        public const string Library = "{lib}";
#endif
        /// <summary>HIGHTICK_ABI_VERSION of the library these declarations follow.</summary>
        public const uint AbiVersion = {abi};
        /// <summary>HIGHTICK_LAST_ERROR_BYTES.</summary>
        public const int LastErrorBytes = {last_error};
        /// <summary>The game's wire schema hash these records follow.</summary>
        public const ulong SchemaHash = 0x{hash};

        [DllImport(Library)] public static extern uint hightick_abi_version();
        [DllImport(Library)] public static extern IntPtr hightick_status_text(int status);
        [DllImport(Library)] public static extern Status hightick_last_error(byte[] buf, UIntPtr capacity, out UIntPtr outLen);
        [DllImport(Library)] public static extern Status hightick_config_default(out Config config);
        [DllImport(Library)] public static extern Status hightick_connect(byte[] token, UIntPtr tokenLen, ref Config config, ulong nowUs, out ulong client);
        [DllImport(Library)] public static extern Status hightick_update(ulong client, ulong nowUs);
        [DllImport(Library)] public static extern Status hightick_send_input(ulong client, uint tick, uint aimTick, ref {input} input);
        [DllImport(Library)] public static extern Status hightick_poll_snapshot(ulong client, out SnapshotInfo info, [Out] {entity}[] entities, UIntPtr capacity, out UIntPtr count);
        [DllImport(Library)] public static extern Status hightick_poll_events(ulong client, [Out] {event}[] events, UIntPtr capacity, out UIntPtr count);
        [DllImport(Library)] public static extern Status hightick_entity(ulong client, uint id, double renderTick, out {entity} entity);
        [DllImport(Library)] public static extern Status hightick_stats(ulong client, out Stats stats);
        [DllImport(Library)] public static extern Status hightick_tick_sync(ulong client, out TickSync sync);
        [DllImport(Library)] public static extern Status hightick_connection(ulong client, out Connection connection);
        [DllImport(Library)] public static extern Status hightick_disconnect(ulong client);
        [DllImport(Library)] public static extern Status hightick_close(ulong client);

        /// <summary>Throws if a record's size differs from the library's (a stale binding).</summary>
        public static void CheckLayout()
        {{
"#,
        lib = m.names.library,
        abi = HIGHTICK_ABI_VERSION,
        last_error = HIGHTICK_LAST_ERROR_BYTES,
        hash = m.hash,
    );
    let sizes = [
        ("Config", size_of::<HightickConfig>()),
        ("Stats", size_of::<HightickStats>()),
        ("TickSync", size_of::<HightickTickSync>()),
        ("Connection", size_of::<HightickConnection>()),
        ("SnapshotInfo", size_of::<HightickSnapshotInfo>()),
        (input.as_str(), m.input.0.size()),
        (event.as_str(), m.event.0.size()),
        (entity.as_str(), m.entity.0.size()),
    ];
    for (name, size) in sizes {
        let _ = writeln!(
            s,
            "            Check(\"{name}\", Marshal.SizeOf(typeof({name})), {size});"
        );
    }
    s.push_str(
        r#"            uint abi = hightick_abi_version();
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
                    record + " is " + size + " bytes here, " + expected + " in the library");
            }
        }
    }

    /// <summary>A call failed: its status and the library's words for why.</summary>
    public sealed class HightickException : Exception
    {
        public readonly Status Status;

        public HightickException(string call, Status status, string detail)
            : base(call + ": " + status + " (" + detail + ")")
        {
            Status = status;
        }
    }
"#,
    );
    let _ = write!(
        s,
        "
    /// <summary>
    /// A connection to a {game} match. Use it from one thread (Unity's main
    /// thread): call Update once per frame with your clock, then poll.
    /// Dispose closes it (the server is told at once).
    /// </summary>
    public sealed class {client} : IDisposable
    {{
        ulong handle;

        {client}(ulong handle)
        {{
            this.handle = handle;
        }}
",
        game = m.game,
    );
    s.push_str(
        &CLIENT_BODY
            .replace("CLIENT", &client)
            .replace("INPUT", &input)
            .replace("EVENT", &event)
            .replace("ENTITY", &entity),
    );
    s.push_str("}\n");
    s
}

/// A record as a C# struct: its constants, then its fields in the C
/// order, an array as one field per element (`Position0`, `Position1`),
/// so the struct stays blittable without `unsafe` fixed buffers.
fn record_struct(s: &mut String, pascal_game: &str, r: &Record) {
    let _ = write!(
        s,
        "
    /// <summary>Hightick{pascal_game}{what}: {doc}</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct {pascal_game}{what}
    {{
",
        what = r.what,
        doc = xml(&r.doc),
    );
    for c in &r.constants {
        let _ = writeln!(
            s,
            "        /// <summary>{} ({}).</summary>\n        public const byte {} = {};",
            xml(c.doc.trim_end_matches('.')),
            c.c_name,
            c.csharp,
            c.value
        );
    }
    for f in &r.fields {
        let name = pascal(&f.name);
        let ty = f.ty.scalar.csharp();
        let _ = writeln!(s, "        /// <summary>{}</summary>", xml(&f.doc));
        match f.ty.len {
            None => {
                let _ = writeln!(s, "        public {ty} {name};");
            }
            Some(n) => {
                let names: Vec<String> = (0..n).map(|i| format!("{name}{i}")).collect();
                let _ = writeln!(s, "        public {ty} {};", names.join(", "));
            }
        }
    }
    s.push_str("    }\n");
}

/// Text for an XML doc comment: Markdown's backticks dropped, `<`, `>`
/// and `&` escaped.
fn xml(text: &str) -> String {
    text.replace('`', "")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
