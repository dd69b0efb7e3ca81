// A console client of the arena in C#, the same play as c/play.c: connects
// with a connect token, runs forward for a few seconds, disconnects.
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
            bool haveStart = false;
            float startX = 0, startZ = 0, lastX = 0, lastZ = 0;
            uint lastTickSent = 0;
            Stats stats;
            Connection before, after;
            using (var client = ArenaClient.Connect(token, ArenaClient.NowMicros()))
            {
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
            Console.WriteLine("moved " + Math.Sqrt(dx * dx + dz * dz).ToString("F3", inv));
            Console.WriteLine("rtt_ms " + stats.RttMs.ToString("F3", inv));
            Console.WriteLine("jitter_ms " + stats.JitterMs.ToString("F3", inv));
            bool connected = before.State == Connection.Connected;
            bool closedLocally = after.State == Connection.Disconnected && after.Reason == Connection.ClosedLocally;
            Console.WriteLine("connected_before_disconnect " + (connected ? 1 : 0));
            Console.WriteLine("closed_locally " + (closedLocally ? 1 : 0));
            return snapshots > 0 && connected ? 0 : 1;
        }
    }
}
