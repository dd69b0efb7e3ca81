//! The C# binding of a game's C ABI: blittable records, P/Invoke
//! declarations and a wrapper class (`TagClient`), for Unity (Mono or
//! IL2CPP) or any .NET. The ABI's own records, calls and the wrapper are the
//! same for every game ([`CsharpAbi`]: a derived game's file holds them
//! beside its three records from the [`Model`]; the arena, whose records
//! are written by hand, gets them as a file of their own).

use std::fmt::Write;
use std::mem::size_of;

use hightick_client_ffi::{
    HIGHTICK_ABI_VERSION, HIGHTICK_LAST_ERROR_BYTES, HightickConfig, HightickConnection,
    HightickPrediction, HightickPredictionStats, HightickSnapshotInfo, HightickStats,
    HightickTickSync,
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

/// The prediction calls' records (a game that predicts its local player).
const PREDICTION_RECORDS: &str = r#"
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
"#;

/// The prediction calls' declarations; `ENTITY` stands for the game's.
const PREDICTION_CALLS: &str = r#"        [DllImport(Library)] public static extern Status hightick_prediction_start(ulong client, byte[] stage);
        [DllImport(Library)] public static extern Status hightick_prediction(ulong client, out Prediction prediction);
        [DllImport(Library)] public static extern Status hightick_predicted_entity(ulong client, out ENTITY entity);
        [DllImport(Library)] public static extern Status hightick_prediction_stats(ulong client, out PredictionStats stats);
        [DllImport(Library)] public static extern Status hightick_prediction_smoothing(ulong client, float smoothing);
"#;

/// The wrapper's prediction methods; `ENTITY` stands for the game's.
const PREDICTION_METHODS: &str = r#"
        /// <summary>
        /// Starts predicting the local player on the match's map (null: the
        /// game's default): from now on SendInput moves it at once and
        /// Update corrects it from the server's state. Call it right after
        /// Connect.
        /// </summary>
        public void StartPrediction(string map = null)
        {
            byte[] stage = null;
            if (map != null)
            {
                stage = new byte[Encoding.UTF8.GetByteCount(map) + 1];
                Encoding.UTF8.GetBytes(map, 0, map.Length, stage, 0);
            }
            Check("prediction_start", Native.hightick_prediction_start(handle, stage));
        }

        /// <summary>
        /// The local player as predicted: where to draw it (smoothed) and the
        /// prediction itself; false until the server's first state of it.
        /// </summary>
        public bool TryGetPredictedPosition(out Prediction prediction)
        {
            return Found("prediction", Native.hightick_prediction(handle, out prediction));
        }

        /// <summary>The local player's entity at its predicted (drawn) position; false until known.</summary>
        public bool TryGetPredictedEntity(out ENTITY entity)
        {
            return Found("predicted_entity", Native.hightick_predicted_entity(handle, out entity));
        }

        /// <summary>Comparisons, mispredictions and corrections of the local player's prediction.</summary>
        public PredictionStats PredictionStats
        {
            get
            {
                PredictionStats stats;
                Check("prediction_stats", Native.hightick_prediction_stats(handle, out stats));
                return stats;
            }
        }

        /// <summary>
        /// How a correction is drawn: the share of it still drawn after each
        /// tick (default 0.8). 0 turns smoothing off (corrections at once).
        /// </summary>
        public void SetSmoothing(float smoothing)
        {
            Check("prediction_smoothing", Native.hightick_prediction_smoothing(handle, smoothing));
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
            return TryGetEntity(id, -1.0, out entity);
        }

        /// <summary>
        /// Entity `id` at server tick `renderTick` (interpolated, for a game
        /// whose library interpolates; negative: newest); false if not held.
        /// </summary>
        public bool TryGetEntity(ushort id, double renderTick, out ENTITY entity)
        {
            return Found("entity", Native.hightick_entity(handle, id, renderTick, out entity));
        }

        /// <summary>The id of the entity this player steers (its avatar); false while it has none.</summary>
        public bool TryGetAvatar(out ushort id)
        {
            uint raw;
            bool found = Found("avatar", Native.hightick_avatar(handle, out raw));
            id = (ushort)raw;
            return found;
        }

        /// <summary>The server's tick and clock offset; false before the first snapshot.</summary>
        public bool TryGetTickSync(out TickSync sync)
        {
            return Found("tick_sync", Native.hightick_tick_sync(handle, out sync));
        }

PREDICTION
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

/// What every game's C# binding shares, for one game: the ABI's records,
/// the P/Invoke declarations, the exception and the wrapper class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsharpAbi {
    /// The game's name (`arena`), for comments.
    pub game: String,
    /// The C# namespace (`Hightick.Tag`).
    pub namespace: String,
    /// The native library (`hightick_tag_client`).
    pub library: String,
    /// The wrapper class (`TagClient`).
    pub client: String,
    /// The game's input, event and entity records: C# name and size in
    /// bytes (what `Native.CheckLayout` checks).
    pub records: [(String, usize); 3],
    /// Whether the library has the prediction calls (`export!(.., predict)`).
    pub predict: bool,
    /// The wire schema hash the records follow, when the game has one.
    pub schema_hash: Option<String>,
}

impl CsharpAbi {
    /// A file of its own: the ABI part in its namespace, for a game whose
    /// records are written by hand in another file of that namespace.
    pub fn file(&self) -> String {
        let mut s = format!(
            "\
// What {game}'s C# binding shares with every hightick game's: the C ABI's
// records, the P/Invoke declarations of lib{lib} and {client}.
// Generated by hightick-bindgen (do not edit); the game's own records are
// in another file of namespace {ns}.
//
// On iOS (IL2CPP) the library is linked statically into the player: define
// UNITY_IOS and the calls bind to \"__Internal\".
{USINGS}
namespace {ns}
{{
",
            game = self.game,
            lib = self.library,
            client = self.client,
            ns = self.namespace,
        );
        s.push_str(&self.body());
        s.push_str("}\n");
        s
    }

    /// The ABI part, inside a namespace.
    fn body(&self) -> String {
        let [(input, _), (event, _), (entity, _)] = &self.records;
        let mut s = String::from(ABI_RECORDS);
        if self.predict {
            s.push_str(PREDICTION_RECORDS);
        }
        let hash = self.schema_hash.as_ref().map_or(String::new(), |h| {
            format!(
                "        /// <summary>The game's wire schema hash these records follow.</summary>\n        public const ulong SchemaHash = 0x{h};\n"
            )
        });
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
{hash}
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
        [DllImport(Library)] public static extern Status hightick_avatar(ulong client, out uint id);
        [DllImport(Library)] public static extern Status hightick_stats(ulong client, out Stats stats);
        [DllImport(Library)] public static extern Status hightick_tick_sync(ulong client, out TickSync sync);
        [DllImport(Library)] public static extern Status hightick_connection(ulong client, out Connection connection);
        [DllImport(Library)] public static extern Status hightick_disconnect(ulong client);
        [DllImport(Library)] public static extern Status hightick_close(ulong client);
"#,
            lib = self.library,
            abi = HIGHTICK_ABI_VERSION,
            last_error = HIGHTICK_LAST_ERROR_BYTES,
        );
        if self.predict {
            s.push_str(&PREDICTION_CALLS.replace("ENTITY", entity));
        }
        s.push_str(
            "
        /// <summary>Throws if a record's size differs from the library's (a stale binding).</summary>
        public static void CheckLayout()
        {
",
        );
        let mut sizes = vec![
            ("Config".to_owned(), size_of::<HightickConfig>()),
            ("Stats".to_owned(), size_of::<HightickStats>()),
            ("TickSync".to_owned(), size_of::<HightickTickSync>()),
            ("Connection".to_owned(), size_of::<HightickConnection>()),
            ("SnapshotInfo".to_owned(), size_of::<HightickSnapshotInfo>()),
        ];
        sizes.extend(self.records.iter().cloned());
        if self.predict {
            sizes.push(("Prediction".to_owned(), size_of::<HightickPrediction>()));
            sizes.push((
                "PredictionStats".to_owned(),
                size_of::<HightickPredictionStats>(),
            ));
        }
        for (name, size) in sizes {
            let _ = writeln!(
                s,
                "            Check(\"{name}\", Marshal.SizeOf(typeof({name})), {size});"
            );
        }
        s.push_str(NATIVE_END);
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
            game = self.game,
            client = self.client,
        );
        let prediction = if self.predict {
            PREDICTION_METHODS.replace("ENTITY", entity)
        } else {
            String::new()
        };
        s.push_str(
            &CLIENT_BODY
                .replace("PREDICTION\n", &prediction)
                .replace("CLIENT", &self.client)
                .replace("INPUT", input)
                .replace("EVENT", event)
                .replace("ENTITY", entity),
        );
        s
    }
}

/// The `using` lines of a C# file.
const USINGS: &str = "
using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text;
";

/// The end of `Native` after its size checks, and the exception type.
const NATIVE_END: &str = r#"            uint abi = hightick_abi_version();
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
"#;

/// The C# file of a derived game (`Hightick<Game>.cs`): its records and
/// the ABI part, in namespace `Hightick.<Game>`.
pub(crate) fn emit(m: &Model) -> String {
    let pascal_game = &m.names.pascal;
    let abi = CsharpAbi {
        game: m.game.to_owned(),
        namespace: format!("Hightick.{pascal_game}"),
        library: m.names.library.clone(),
        client: format!("{pascal_game}Client"),
        records: [&m.input.0, &m.event.0, &m.entity.0]
            .map(|r| (format!("{pascal_game}{}", r.what), r.size())),
        predict: false,
        schema_hash: Some(m.hash.clone()),
    };
    let mut s = format!(
        "\
// {game}'s client library for C#: blittable records, P/Invoke declarations
// and {client}, one to one with lib{lib}'s C ABI.
// Generated by hightick-bindgen from the game's wire schema (hash
// {hash}): do not edit. The game binary's `bindings --out DIR` writes it
// again, with the library's source beside it.
//
// On iOS (IL2CPP) the library is linked statically into the player: define
// UNITY_IOS and the calls bind to \"__Internal\".
{USINGS}
namespace {ns}
{{
",
        game = m.game,
        client = abi.client,
        lib = m.names.library,
        hash = m.hash,
        ns = abi.namespace,
    );
    let mut records = String::new();
    for record in [&m.input.0, &m.event.0, &m.entity.0] {
        record_struct(&mut records, pascal_game, record);
    }
    s.push_str(records.trim_start_matches('\n'));
    s.push('\n');
    s.push_str(&abi.body());
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
