// The arena's records for C#, written by hand like the arena's C records
// (crates/client-ffi-arena/src/): blittable, one to one with
// include/hightick_arena_client.h. Everything else of the binding (the ABI's
// records, the P/Invoke declarations, ArenaClient) is generated beside it,
// in HightickArena.cs.

using System.Runtime.InteropServices;

namespace Hightick
{
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
}
