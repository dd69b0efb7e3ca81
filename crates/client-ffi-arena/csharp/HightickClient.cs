// A thin, idiomatic C# wrapper over HightickNative.cs: one ArenaClient per
// connection, statuses turned into return values or HightickException.
// Nothing here allocates per frame: buffers are the caller's arrays (pinned,
// not copied: the records are blittable) and records come back as structs.

using System;
using System.Diagnostics;
using System.Text;

namespace Hightick
{
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

    /// <summary>
    /// A connection to an arena match. Use it from one thread (Unity's main
    /// thread): call Update once per frame with your clock, then poll.
    /// Dispose closes it (the server is told at once).
    /// </summary>
    public sealed class ArenaClient : IDisposable
    {
        ulong handle;

        ArenaClient(ulong handle)
        {
            this.handle = handle;
        }

        /// <summary>Microseconds on a monotonic clock, for Update and Connect.</summary>
        public static ulong NowMicros()
        {
            return (ulong)(Stopwatch.GetTimestamp() * (1e6 / Stopwatch.Frequency));
        }

        /// <summary>Connects with a connect token (the 2048 bytes the gateway hands out).</summary>
        public static ArenaClient Connect(byte[] token, ulong nowUs, Config? config = null)
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
            return new ArenaClient(h);
        }

        /// <summary>The frame's network work: receive, timers, send.</summary>
        public void Update(ulong nowUs)
        {
            Check("update", Native.hightick_update(handle, nowUs));
        }

        /// <summary>Sends the frame's input for server tick `tick`; false until connected.</summary>
        public bool SendInput(uint tick, uint aimTick, ArenaInput input)
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
        public int PollEvents(ArenaEvent[] buffer)
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
        public int PollSnapshot(ArenaEntity[] buffer, out SnapshotInfo info)
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

        /// <summary>Entity `id` at server tick `renderTick` (negative: newest); false if not held.</summary>
        public bool TryGetEntity(ushort id, double renderTick, out ArenaEntity entity)
        {
            return Found("entity", Native.hightick_entity(handle, id, renderTick, out entity));
        }

        /// <summary>The server's tick and clock offset; false before the first snapshot.</summary>
        public bool TryGetTickSync(out TickSync sync)
        {
            return Found("tick_sync", Native.hightick_tick_sync(handle, out sync));
        }

        /// <summary>
        /// Starts predicting the local player on the match's map (null: the
        /// arena's default, "dust_corners"): from now on SendInput moves it at
        /// once and Update corrects it from the server's state. Call it right
        /// after Connect.
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
        public bool TryGetPredictedEntity(out ArenaEntity entity)
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
}
