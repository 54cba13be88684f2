/*
 * softswitch's declaration of the Tofino Native Architecture (TNA, Tofino 1), as programs
 * include it with `#include <tna.p4>`.
 *
 * Written for softswitch from the public description of the architecture, keeping the public
 * names and signatures so that a program written against this file also compiles with bf-p4c
 * (`--arch tna`).  Only what softswitch implements is declared; a program using another TNA
 * extern (Lpf, Wred, Pktgen, ...) gets "unknown extern" here, as it would on a target without it.
 *
 * The pipeline (engine/tna_pipeline.py): ingress parser -> ingress -> ingress deparser (mirror,
 * resubmit, digest) -> traffic manager (queues, PRE) -> egress parser -> egress -> egress
 * deparser (mirror).  Every parser starts at the intrinsic metadata the hardware prepends:
 * ingress_intrinsic_metadata_t and then PORT_METADATA_SIZE bits of port metadata (or the
 * resubmit header of a resubmitted packet); egress_intrinsic_metadata_t in egress, followed by
 * what the ingress deparser emitted before the headers (bridged metadata) or by the mirror
 * header of a mirrored copy.
 */

#ifndef _TOFINO_NATIVE_ARCHITECTURE_P4_
#define _TOFINO_NATIVE_ARCHITECTURE_P4_

#include "core.p4"

/* ------------------------------------------------------------------------------------------
 * Tofino 1 sizes
 * ---------------------------------------------------------------------------------------- */
typedef bit<9>  PortId_t;                 // a port number within the device
typedef bit<16> MulticastGroupId_t;
typedef bit<5>  QueueId_t;                // a queue of the egress port (32 per port)
typedef bit<3>  MirrorType_t;             // which mirror header the deparser emits (0: none)
typedef bit<10> MirrorId_t;               // a mirror session
typedef bit<16> ReplicationId_t;
typedef bit<8>  ResubmitType_t;           // not used on Tofino 1 beyond 3 bits
typedef bit<3>  DigestType_t;

const bit<32> PORT_METADATA_SIZE = 32w64; // bits of port metadata after the intrinsic header

// The match kinds TNA adds to core.p4's exact, ternary and lpm (Tofino's dleft_hash and
// atcam_partition_index are not implemented here).
match_kind {
    range,
    selector,               // the key fields an ActionSelector hashes
    optional
}

/* ------------------------------------------------------------------------------------------
 * Parser errors (ingress_intrinsic_metadata_from_parser_t.parser_err is a bit mask of these)
 * ---------------------------------------------------------------------------------------- */
typedef error ParserError_t;

const bit<16> PARSER_ERROR_OK             = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH       = 16w0x0001;  // no transition matched
const bit<16> PARSER_ERROR_PARTIAL_HDR    = 16w0x0002;  // the packet ended inside a header
const bit<16> PARSER_ERROR_CTR_RANGE      = 16w0x0004;  // parser counter out of range
const bit<16> PARSER_ERROR_TIMEOUT_USER   = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW     = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT        = 16w0x0020;
const bit<16> PARSER_ERROR_DST_CONT       = 16w0x0040;
const bit<16> PARSER_ERROR_PHV_OWNER      = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE     = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE       = 16w0x0400;
const bit<16> PARSER_ERROR_FCS            = 16w0x0800;
const bit<16> PARSER_ERROR_CSUM_MBE       = 16w0x1000;

/* ------------------------------------------------------------------------------------------
 * Enums of the externs
 * ---------------------------------------------------------------------------------------- */
enum MeterType_t { PACKETS, BYTES }

enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }

enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }

enum SelectorMode_t { FAIR, RESILIENT }

enum HashAlgorithm_t { IDENTITY, RANDOM, CRC8, CRC16, CRC32, CRC64, CUSTOM }

/* ------------------------------------------------------------------------------------------
 * Intrinsic metadata
 * ---------------------------------------------------------------------------------------- */

// Prepended to every packet entering the ingress parser (64 bits), which must extract it.
@__intrinsic_metadata
header ingress_intrinsic_metadata_t {
    bit<1>   resubmit_flag;               // 1: a resubmitted packet
    bit<1>   _pad1;
    bit<2>   packet_version;
    bit<3>   _pad2;
    PortId_t ingress_port;
    bit<48>  ingress_mac_tstamp;          // ns, when the MAC received the packet
}

// What ingress asks of the traffic manager.
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;           // the unicast port; a packet without one is not unicast
    bit<1>   bypass_egress;               // 1: skip the egress pipeline
    bit<1>   deflect_on_drop;             // 1: deflect rather than drop when the queue is full
    bit<3>   ingress_cos;                 // class of service (PFC)
    QueueId_t qid;                        // the egress queue
    bit<3>   icos_for_copy_to_cpu;
    bit<1>   copy_to_cpu;                 // 1: also a copy to the CPU port
    bit<2>   packet_color;
    bit<1>   disable_ucast_cutthru;
    bit<1>   enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;       // != 0: replicate to this group
    MulticastGroupId_t mcast_grp_b;
    bit<13>  level1_mcast_hash;
    bit<13>  level2_mcast_hash;
    bit<16>  level1_exclusion_id;
    bit<9>   level2_exclusion_id;
    bit<16>  rid;                         // the replication id of the unicast copy
}

// What the ingress parser tells ingress.
@__intrinsic_metadata
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;                // ns
    bit<32> global_ver;
    bit<16> parser_err;                   // PARSER_ERROR_* bits
}

// What ingress asks of the ingress deparser.
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3>       drop_ctl;                // bit 0: drop (unicast and multicast copies)
    bit<3>       digest_type;             // != 0: the deparser sends that digest
    bit<3>       resubmit_type;           // != 0: the packet is resubmitted
    MirrorType_t mirror_type;             // != 0: the deparser mirrors with that header
}

// Prepended to every packet entering the egress parser (27 bytes), which must extract it.
@__intrinsic_metadata
header egress_intrinsic_metadata_t {
    bit<7>   _pad0;
    PortId_t egress_port;
    bit<5>   _pad1;
    bit<19>  enq_qdepth;                  // queue depth when the packet was enqueued (cells)
    bit<6>   _pad2;
    bit<2>   enq_congest_stat;
    bit<14>  _pad3;
    bit<18>  enq_tstamp;
    bit<5>   _pad4;
    bit<19>  deq_qdepth;                  // queue depth when it was dequeued
    bit<6>   _pad5;
    bit<2>   deq_congest_stat;
    bit<8>   app_pool_congest_stat;
    bit<14>  _pad6;
    bit<18>  deq_timedelta;               // ns spent in the queue
    bit<16>  egress_rid;                  // replication id of a multicast copy
    bit<7>   _pad7;
    bit<1>   egress_rid_first;
    bit<3>   _pad8;
    QueueId_t egress_qid;                 // the queue it came from
    bit<5>   _pad9;
    bit<3>   egress_cos;
    bit<7>   _pad10;
    bit<1>   deflection_flag;
    bit<16>  pkt_length;                  // bytes
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3>       drop_ctl;                // bit 0: drop
    MirrorType_t mirror_type;             // != 0: mirror with that header
    bit<1>       coalesce_flush;
    bit<7>       coalesce_length;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
    bit<1> force_tx_error;
}

/* ------------------------------------------------------------------------------------------
 * Externs
 * ---------------------------------------------------------------------------------------- */

// The port metadata (PORT_METADATA_SIZE bits after the intrinsic header) as a value of T,
// which the control plane sets per port.
extern T port_metadata_unpack<T>(packet_in pkt);

// Ones'-complement 16-bit checksum (IPv4, TCP, UDP): verified in parsers, computed in deparsers.
extern Checksum {
    Checksum();
    void add<T>(in T data);
    void subtract<T>(in T data);
    bool verify();
    bit<16> get();
    void subtract_all_and_deposit<T>(out T residual);
    bit<16> update<T>(in T data, @optional in bool zeros_as_ones);
}

// A counter in the parser (header stacks, TLVs).
extern ParserCounter {
    ParserCounter();
    void set<T>(in T value);
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<3> mask, in bit<8> add);
    bool is_zero();
    bool is_negative();
    void increment(in bit<8> value);
    void decrement(in bit<8> value);
}

// A CRC polynomial for Hash(HashAlgorithm_t.CUSTOM, poly).
extern CRCPolynomial<T> {
    CRCPolynomial(T coeff, bool reversed, bool msb, bool extended, T init, T xor);
}

extern Hash<W> {
    Hash(HashAlgorithm_t algo);
    Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly);
    W get<D>(in D data);
}

extern Random<W> {
    Random();
    W get();
}

extern Counter<W, I> {
    Counter(bit<32> size, CounterType_t type);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectCounter<W> {
    DirectCounter(CounterType_t type);
    void count(@optional in bit<32> adjust_byte_count);
}

extern Meter<I> {
    Meter(bit<32> size, MeterType_t type);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectMeter {
    DirectMeter(MeterType_t type);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
    bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(@optional in bit<32> adjust_byte_count);
}

// Data-plane state: `size` cells of T (bit<8>, bit<16>, bit<32>, or a struct of two fields of
// one of those widths).  The data plane reaches a cell only through one RegisterAction per
// packet and pipeline (read() and write() are RegisterActions the compiler writes).
extern Register<T, I> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T read(in I index);
    void write(in I index, in T value);
}

// One cell per entry of the table it is attached to.
extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
    void write(in T value);
}

// One read-modify-write of a register cell (the stateful ALU): execute(index) runs apply on the
// cell's value, stores what apply leaves in `value` and returns what it puts in `rv`.
extern RegisterAction<T, I, U> {
    RegisterAction(Register<T, I> reg);
    U execute(in I index);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv);
}

extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute();
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv);
}

extern ActionProfile {
    ActionProfile(bit<32> size);
}

extern ActionSelector {
    ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode,
                   bit<32> max_group_size, bit<32> num_groups);
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode);
}

// Deparser externs: their effect happens after the deparser, in the traffic manager.
extern Mirror {
    Mirror();
    void emit(in MirrorId_t session_id);
    void emit<T>(in MirrorId_t session_id, in T hdr);   // hdr: prepended to the mirrored copy
}

extern Resubmit {
    Resubmit();
    void emit();
    void emit<T>(in T hdr);                               // hdr: the resubmit header (64 bits)
}

extern Digest<T> {
    Digest();
    void pack(in T data);
}

/* ------------------------------------------------------------------------------------------
 * The blocks and the packages
 * ---------------------------------------------------------------------------------------- */
parser IngressParserT<H, M>(
    packet_in pkt,
    out H hdr,
    out M ig_md,
    @optional out ingress_intrinsic_metadata_t ig_intr_md,
    @optional out ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm,
    @optional out ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr);

parser EgressParserT<H, M>(
    packet_in pkt,
    out H hdr,
    out M eg_md,
    @optional out egress_intrinsic_metadata_t eg_intr_md,
    @optional out egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr);

control IngressT<H, M>(
    inout H hdr,
    inout M ig_md,
    @optional in ingress_intrinsic_metadata_t ig_intr_md,
    @optional in ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr,
    @optional inout ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    @optional inout ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm);

control EgressT<H, M>(
    inout H hdr,
    inout M eg_md,
    @optional in egress_intrinsic_metadata_t eg_intr_md,
    @optional in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    @optional inout egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    @optional inout egress_intrinsic_metadata_for_output_port_t eg_intr_md_for_oport);

control IngressDeparserT<H, M>(
    packet_out pkt,
    inout H hdr,
    in M metadata,
    @optional in ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    @optional in ingress_intrinsic_metadata_t ig_intr_md);

control EgressDeparserT<H, M>(
    packet_out pkt,
    inout H hdr,
    in M metadata,
    @optional in egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    @optional in egress_intrinsic_metadata_t eg_intr_md,
    @optional in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr);

package Pipeline<IH, IM, EH, EM>(
    IngressParserT<IH, IM> ingress_parser,
    IngressT<IH, IM> ingress,
    IngressDeparserT<IH, IM> ingress_deparser,
    EgressParserT<EH, EM> egress_parser,
    EgressT<EH, EM> egress,
    EgressDeparserT<EH, EM> egress_deparser);

// softswitch runs one pipeline: every port of the device runs pipe0.
@pkginfo(arch="TNA", version="1.0.0")
package Switch<IH0, IM0, EH0, EM0>(Pipeline<IH0, IM0, EH0, EM0> pipe0);

#endif  /* _TOFINO_NATIVE_ARCHITECTURE_P4_ */
