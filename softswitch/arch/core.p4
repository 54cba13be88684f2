/*
 * softswitch's P4_16 core library: the declarations every P4_16 program sees.
 *
 * Written for softswitch to match p4c's p4include/core.p4 declaration for declaration: the
 * names, member order (error codes are numbered in this order), signatures and annotations
 * are what programs, P4Info and the BMv2 JSON observe, so they must not drift from p4c.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/// The error codes every program has; programs may add their own with further `error`
/// declarations, which are numbered after these.
error {
    NoError,               /// nothing went wrong
    PacketTooShort,        /// extract/lookahead ran past the end of the packet
    NoMatch,               /// no case of a `select` matched
    StackOutOfBounds,      /// header stack index (or .next) outside the stack
    HeaderTooShort,        /// a varbit extract asked for more bits than the field holds
    ParserTimeout,         /// the parser ran longer than the target allows
    ParserInvalidArgument  /// a parser operation got an argument the target rejects
                           /// (e.g. advance by a count that is not a multiple of 8 bits)
}

/// The packet as the parser sees it.
extern packet_in {
    /// Copy a fixed-size header from the packet into `hdr`, make it valid and move past it.
    void extract<T>(out T hdr);
    /// Same for a header with one varbit field, whose size in bits is given.
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    /// Read the next bits as a T without moving the cursor.
    T lookahead<T>();
    /// Skip this many bits.
    void advance(in bit<32> sizeInBits);
    /// Packet length in bytes (not available on every target).
    bit<32> length();
}

/// The packet being built by the deparser.
extern packet_out {
    /// Append `hdr` (a header, stack, union, or struct of those); invalid headers add nothing.
    void emit<T>(in T hdr);
}

/// In a parser: when `check` is false, set the parser error to `toSignal` and go to reject.
extern void verify(in bool check, in error toSignal);

/// The action that does nothing.
@noWarn("unused")
action NoAction() {}

/// Table key match kinds every architecture has; architectures may declare more.
match_kind {
    exact,    /// the key equals the entry value
    ternary,  /// the key equals the value on the bits set in the entry mask
    lpm       /// longest-prefix match
}

/// Compile-time assertion: stops compilation with `message` when `check` is false.
/// Returns a bool so it can initialise a top-level constant, e.g.
///     const bool ok = static_assert(V1MODEL_VERSION >= 20180101, "need v1model");
extern bool static_assert(bool check, string message);

/// The same with a default message.
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
