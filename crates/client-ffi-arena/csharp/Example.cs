// A console client of the arena in C#, the same play as c/play.c: connects
// with a connect token, runs forward for a few seconds predicting its own
// player, disconnects.
//
// Build and run (from the workspace root, after `cargo build -p hightick-client-ffi-arena`):
//   mcs -out:play.exe crates/client-ffi-arena/csharp/*.cs
//   LD_LIBRARY_PATH=target/debug mono play.exe TOKEN_FILE SECONDS
// It prints what it saw as `key value` lines and exits 0 if it connected,
// received snapshots and closed cleanly.

using System;
using System.IO;
using System.Threading;

namespace Hightick
{
    public static class Example
    {
        const int InputLeadTicks = 6;
        const double InterpolationTicks = 3.0;
        /// <summary>The match's map: what the player's movement is predicted on.</summary>
        const string Map = "dust_corners";

        static float Distance(float ax, float ay, float az, float bx, float by, float bz)
        {
            float dx = ax - bx, dy = ay - by, dz = az - bz;
            return (float)Math.Sqrt(dx * dx + dy * dy + dz * dz);
        }

        public static int Main(string[] args)
        {
            if (args.Length != 2)
            {
                Console.Error.WriteLine("usage: play.exe TOKEN_FILE SECONDS");
                return 2;
            }
            byte[] token = File.ReadAllBytes(args[0]);
            double seconds = double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
            try
            {
                return Play(token, seconds);
            }
            catch (HightickException e)
            {
                Console.Error.WriteLine(e.Message);
                return 1;
            }
        }

        static int Play(byte[] token, double seconds)
        {
            var entities = new ArenaEntity[256];
            var events = new ArenaEvent[64];
            ulong snapshots = 0, eventsSeen = 0;
            int me = -1;
            int avatar = -1;
            bool haveStart = false;
            float startX = 0, startZ = 0, lastX = 0, lastZ = 0;
            uint lastTickSent = 0;
            // The predicted (drawn) position: first, newest, and its distance
            // from the interpolated one each frame both are known.
            var gaps = new float[8192];
            int gapCount = 0;
            ulong predictedFrames = 0;
            bool predictedFinite = true, entityMatches = true;
            float pStartX = 0, pStartY = 0, pStartZ = 0, pLastX = 0, pLastY = 0, pLastZ = 0;
            Stats stats;
            PredictionStats prediction;
            Connection before, after;
            using (var client = ArenaClient.Connect(token, ArenaClient.NowMicros()))
            {
                client.StartPrediction(Map);
                // Corrections fade out (0.8 of one is left after a tick, the
                // default); 0 would draw them at once.
                client.SetSmoothing(0.8f);
                ulong end = ArenaClient.NowMicros() + (ulong)(seconds * 1e6);
                while (ArenaClient.NowMicros() < end)
                {
                    client.Update(ArenaClient.NowMicros());
                    int n;
                    while ((n = client.PollEvents(events)) > 0)
                    {
                        for (int i = 0; i < n; i++)
                        {
                            eventsSeen++;
                            if (events[i].Kind == ArenaEvent.Welcome)
                            {
                                me = events[i].Player;
                            }
                        }
                        if (n < events.Length)
                        {
                            break;
                        }
                    }
                    SnapshotInfo info;
                    if (client.PollSnapshot(entities, out info) >= 0)
                    {
                        snapshots++;
                    }
                    TickSync sync;
                    if (client.TryGetTickSync(out sync))
                    {
                        ArenaEntity body;
                        if (me >= 0 && client.TryGetEntity((ushort)me, sync.ServerTick - InterpolationTicks, out body)
                            && (body.Has & ArenaEntity.HasTransform) != 0)
                        {
                            if (!haveStart)
                            {
                                startX = body.X;
                                startZ = body.Z;
                                haveStart = true;
                            }
                            lastX = body.X;
                            lastZ = body.Z;
                            Prediction p;
                            if (client.TryGetPredictedPosition(out p))
                            {
                                predictedFinite &= !float.IsNaN(p.X) && !float.IsInfinity(p.X)
                                    && !float.IsNaN(p.Y) && !float.IsInfinity(p.Y)
                                    && !float.IsNaN(p.Z) && !float.IsInfinity(p.Z);
                                if (predictedFrames == 0)
                                {
                                    pStartX = p.X;
                                    pStartY = p.Y;
                                    pStartZ = p.Z;
                                }
                                pLastX = p.X;
                                pLastY = p.Y;
                                pLastZ = p.Z;
                                predictedFrames++;
                                if (gapCount < gaps.Length)
                                {
                                    gaps[gapCount++] = Distance(p.X, p.Y, p.Z, body.X, body.Y, body.Z);
                                }
                                ArenaEntity own;
                                entityMatches &= client.TryGetPredictedEntity(out own) && own.Id == me
                                    && own.X == p.X && own.Y == p.Y && own.Z == p.Z;
                            }
                        }
                        uint tick = (uint)sync.ServerTick + InputLeadTicks;
                        if (tick > lastTickSent)
                        {
                            var input = new ArenaInput { MoveY = 127, Yaw = (tick % 1024) * 0.01f };
                            double aim = sync.ServerTick - InterpolationTicks;
                            client.SendInput(tick, aim > 0 ? (uint)aim : 0, input);
                            lastTickSent = tick;
                        }
                    }
                    Thread.Sleep(4);
                }
                stats = client.Stats;
                // The entity the engine says this player steers: the Welcome's body.
                ushort held;
                avatar = client.TryGetAvatar(out held) ? held : -1;
                prediction = client.PredictionStats;
                before = client.Connection;
                client.Disconnect();
                after = client.Connection;
            }
            double dx = lastX - startX, dz = lastZ - startZ;
            var inv = System.Globalization.CultureInfo.InvariantCulture;
            Console.WriteLine("snapshots " + snapshots);
            Console.WriteLine("snapshots_applied " + stats.SnapshotsApplied);
            Console.WriteLine("events " + eventsSeen);
            Console.WriteLine("inputs_sent " + stats.InputsSent);
            Console.WriteLine("welcome " + me);
            Console.WriteLine("avatar " + avatar);
            Console.WriteLine("moved " + Math.Sqrt(dx * dx + dz * dz).ToString("F3", inv));
            Console.WriteLine("rtt_ms " + stats.RttMs.ToString("F3", inv));
            Console.WriteLine("jitter_ms " + stats.JitterMs.ToString("F3", inv));
            Array.Sort(gaps, 0, gapCount);
            Console.WriteLine("predicted_frames " + predictedFrames);
            Console.WriteLine("predicted_finite " + (predictedFinite ? 1 : 0));
            Console.WriteLine("predicted_moved "
                + Distance(pStartX, pStartY, pStartZ, pLastX, pLastY, pLastZ).ToString("F3", inv));
            Console.WriteLine("predicted_entity_matches " + (entityMatches && predictedFrames > 0 ? 1 : 0));
            Console.WriteLine("prediction_gap_median_m "
                + (gapCount > 0 ? gaps[gapCount / 2] : -1f).ToString("F3", inv));
            Console.WriteLine("prediction_gap_max_m "
                + (gapCount > 0 ? gaps[gapCount - 1] : -1f).ToString("F3", inv));
            Console.WriteLine("prediction_compared " + prediction.Compared);
            Console.WriteLine("prediction_mispredicted " + prediction.Mispredicted);
            Console.WriteLine("prediction_max_correction_m " + prediction.MaxCorrectionM.ToString("F3", inv));
            bool connected = before.State == Connection.Connected;
            bool closedLocally = after.State == Connection.Disconnected && after.Reason == Connection.ClosedLocally;
            Console.WriteLine("connected_before_disconnect " + (connected ? 1 : 0));
            Console.WriteLine("closed_locally " + (closedLocally ? 1 : 0));
            return snapshots > 0 && connected ? 0 : 1;
        }
    }
}
