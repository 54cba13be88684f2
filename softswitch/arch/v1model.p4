/*
 * softswitch's declaration of the v1model architecture (the P4_14 switch model, as run by
 * BMv2 simple_switch).
 *
 * Written for softswitch to match p4c's p4include/v1model.p4: the same declarations in the same
 * order with the same signatures and annotations.  Order is observable -- enum members,
 * standard_metadata_t fields and match kinds are numbered/listed in declaration order by P4Info
 * and the BMv2 JSON -- so keep it when editing.
 *
 * Behaviour of the externs at the end of ingress/egress is described in BMv2's
 * docs/simple_switch.md; softswitch's engine/ implements it.
 *
 * Define V1MODEL_VERSION before including this file to select a revision (as with p4c):
 * 20180101 (the default) or 20200408, which adds the PortId_t typedef and index-type
 * parameters on counter, meter and register.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

match_kind {
    range,     // low <= key <= high
    optional,  // exact match, or match anything
    selector   // the key fed to an action_selector's hash
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

// The intrinsic metadata of every packet.  @alias names the BMv2 field that backs a member.
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t    ingress_port;
    PortId_t    egress_spec;      // output port chosen in ingress (511 = drop)
    PortId_t    egress_port;      // the actual output port, meaningful in egress only
#else
    bit<9>      ingress_port;
    bit<9>      egress_spec;
    bit<9>      egress_port;
#endif
    bit<32>     instance_type;    // normal, clone, replica, resubmit, recirculate...
    bit<32>     packet_length;    // bytes
    // queueing metadata (meaningful in egress only)
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;        // microseconds
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;           // packets
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;        // microseconds spent in the queue
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;           // packets, when dequeued
    // intrinsic metadata
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;            // non-zero: multicast to this group at the end of ingress
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;           // replication id of a multicast copy
    bit<1>  checksum_error;       // 1 when a verify_checksum call failed
    error   parser_error;         // what the parser stopped on
    @alias("intrinsic_metadata.priority")
    bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

// An array of `size` counters, updated by the program, read by the control plane.
extern counter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    counter(bit<32> size, CounterType type);
    // Count the packet on counter `index`; an index >= size counts nothing.
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

// One counter per entry of the table whose `counters` property names it; every hit counts,
// whether or not the action calls count().
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

// Colour encodings written by meters.
#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

// An array of `size` two-rate three-colour meters (RFC 2698).
extern meter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    meter(bit<32> size, MeterType type);
    // Run meter `index` on this packet; result: 0 green, 1 yellow, 2 red (T is bit<W>, W >= 2).
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

// One meter per entry of the table whose `meters` property names it.
extern direct_meter<T> {
    direct_meter(MeterType type);
    // The colour of the entry that matched; only callable from that table's actions.
    void read(out T result);
}

// An array of `size` values of type T that the program can read and write.
#if V1MODEL_VERSION >= 20200408
extern register<T, I>
#else
extern register<T>
#endif
{
    register(bit<32> size);
    // Out-of-range reads give an unspecified value; out-of-range writes do nothing.
    @noSideEffects
#if V1MODEL_VERSION >= 20200408
    void read(out T result, in I index);
#else
    void read(out T result, in bit<32> index);
#endif
#if V1MODEL_VERSION >= 20200408
    void write(in I index, in T value);
#else
    void write(in bit<32> index, in T value);
#endif
}

// A table implementation: entries point at members shared between entries.
extern action_profile {
    action_profile(bit<32> size);
}

// A uniformly random value in [lo, hi] (unspecified when lo > hi).
extern void random<T>(out T result, in T lo, in T hi);

// Send `data` to the control plane (its value now, not at the end of ingress); ingress only.
// A named struct type gives the digest its control-plane name; `receiver` is ignored by BMv2.
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

// Set egress_spec to the drop port and mcast_grp to 0.  Later code may still change either.
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

// result = base + (H(data) % max), or base when max is 0.
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

// An action profile whose group member is chosen by hashing the `selector` key fields.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

// In VerifyChecksum: when `condition` holds and the checksum of `data` differs from
// `checksum`, set standard_metadata.checksum_error to 1.
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

// In ComputeChecksum: when `condition` holds, write the checksum of `data` to `checksum`.
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// As above, with the unparsed payload appended to `data`.
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// Clone the packet to clone session `session` (I2E in ingress, E2E in egress).
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);

// Ingress only: parse the original packet again, keeping the user metadata fields annotated
// @field_list(index) (values as at the end of ingress).
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

// Egress only: send the deparsed packet back to the parser, keeping @field_list(index) fields.
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

// clone(), also keeping the @field_list(index) user metadata fields in the clones.
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

// Keep at most `length` bytes of the outgoing packet.
extern void truncate(in bit<32> length);

// When `check` is false, BMv2 logs the failing location and exits.
extern void assert(in bool check);

// Same as assert on a target; formal tools treat it as an assumption instead.
extern void assume(in bool check);

// Log a message; "{}" in msg are replaced by the fields of `data`, in order.
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

// The name 'standard_metadata' is reserved.

// The six programmable blocks.  H: a struct of headers, header stacks and header unions;
// M: a struct of user metadata.

parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

// Only verify_checksum/verify_checksum_with_payload calls, blocks and returns belong here.
control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);
@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);
@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

// Only update_checksum/update_checksum_with_payload calls, blocks and returns belong here.
control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

// Only packet_out.emit() calls belong here.
@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif  /* _V1_MODEL_P4_ */
