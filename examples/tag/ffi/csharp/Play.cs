// A console client of tag in C#, on the generated binding (HightickTag.cs):
// connects with a connect token, learns which runner it is (its avatar, as
// the server says), chases the nearest runner it sees while it is "it"
// for a few seconds, checks every snapshot against the game's rules,
// counts the tags it made, disconnects.
//
// Build and run (from the workspace root, after `cargo build -p hightick-example-tag-ffi`):
//   mcs -out:play.exe examples/tag/ffi/csharp/*.cs
//   LD_LIBRARY_PATH=target/debug mono play.exe TOKEN_FILE SECONDS
// It prints what it saw as `key value` lines and exits 0 if it connected,
// received snapshots and closed cleanly.

using System;
using System.IO;
using System.Threading;
using Hightick.Tag;

public static class Play
{
    const int InputLeadTicks = 6;
    /// <summary>The field's half width, centimetres (tag's HALF_FIELD).</summary>
    const int HalfField = 2000;

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
            return Run(token, seconds);
        }
        catch (HightickException e)
        {
            Console.Error.WriteLine(e.Message);
            return 1;
        }
    }

    // The stick toward the nearest other runner in sight while `mine` is
    // "it"; at rest otherwise.
    static void Chase(TagEntity mine, TagEntity[] seen, int count, out sbyte x, out sbyte z)
    {
        x = 0;
        z = 0;
        double best = double.MaxValue;
        for (int i = 0; mine.It == 1 && i < count; i++)
        {
            double dx = seen[i].Position0 - mine.Position0, dz = seen[i].Position1 - mine.Position1;
            double d = Math.Sqrt(dx * dx + dz * dz);
            if (seen[i].Id != mine.Id && d < best && d > 0)
            {
                best = d;
                x = (sbyte)(dx / d * 127);
                z = (sbyte)(dz / d * 127);
            }
        }
    }

    static int Run(byte[] token, double seconds)
    {
        var entities = new TagEntity[64];
        var events = new TagEvent[64];
        ulong snapshots = 0, eventsSeen = 0, badSnapshots = 0, itSeen = 0, taggedByMe = 0;
        int me = -1;
        bool haveStart = false;
        int startX = 0, lastX = 0;
        sbyte stickX = 0, stickZ = 0;
        uint lastTickSent = 0;
        Stats stats;
        Connection before, after;
        using (var client = TagClient.Connect(token, TagClient.NowMicros()))
        {
            ulong end = TagClient.NowMicros() + (ulong)(seconds * 1e6);
            while (TagClient.NowMicros() < end)
            {
                client.Update(TagClient.NowMicros());
                int n;
                while ((n = client.PollEvents(events)) > 0)
                {
                    for (int i = 0; i < n; i++)
                    {
                        eventsSeen++;
                        if (events[i].Kind == TagEvent.Tagged && events[i].TaggedBy == me)
                        {
                            taggedByMe++;
                        }
                    }
                    if (n < events.Length)
                    {
                        break;
                    }
                }
                SnapshotInfo info;
                int count = client.PollSnapshot(entities, out info);
                if (count >= 0)
                {
                    snapshots++;
                    // The rules every state obeys: runners on the field, the
                    // "it" flag a bool, and one runner "it".
                    int its = 0;
                    bool ok = true;
                    for (int i = 0; i < count; i++)
                    {
                        TagEntity e = entities[i];
                        ok &= e.Kind == TagEntity.KindRunner && e.It <= 1
                            && Math.Abs(e.Position0) <= HalfField && Math.Abs(e.Position1) <= HalfField;
                        its += e.It;
                    }
                    if (!ok || (count > 0 && its != 1))
                    {
                        badSnapshots++;
                    }
                    ushort avatar;
                    if (client.TryGetAvatar(out avatar))
                    {
                        me = avatar;
                    }
                    TagEntity mine;
                    if (me >= 0 && client.TryGetEntity((ushort)me, out mine))
                    {
                        if (!haveStart)
                        {
                            startX = mine.Position0;
                            haveStart = true;
                        }
                        lastX = mine.Position0;
                        itSeen += mine.It;
                        Chase(mine, entities, count, out stickX, out stickZ);
                    }
                }
                TickSync sync;
                if (client.TryGetTickSync(out sync))
                {
                    uint tick = (uint)sync.ServerTick + InputLeadTicks;
                    if (tick > lastTickSent)
                    {
                        client.SendInput(tick, tick - InputLeadTicks, new TagInput { X = stickX, Z = stickZ });
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
        Console.WriteLine("snapshots " + snapshots);
        Console.WriteLine("bad_snapshots " + badSnapshots);
        Console.WriteLine("events " + eventsSeen);
        Console.WriteLine("runner " + me);
        Console.WriteLine("tagged_by_me " + taggedByMe);
        Console.WriteLine("start_x " + startX);
        Console.WriteLine("end_x " + lastX);
        Console.WriteLine("it_snapshots " + itSeen);
        Console.WriteLine("inputs_sent " + stats.InputsSent);
        Console.WriteLine("decode_errors " + stats.DecodeErrors);
        Console.WriteLine("full_resyncs " + stats.FullResyncs);
        bool connected = before.State == Connection.Connected;
        bool closedLocally = after.State == Connection.Disconnected && after.Reason == Connection.ClosedLocally;
        Console.WriteLine("connected_before_disconnect " + (connected ? 1 : 0));
        Console.WriteLine("closed_locally " + (closedLocally ? 1 : 0));
        return snapshots > 0 && connected ? 0 : 1;
    }
}
