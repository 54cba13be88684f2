// TNA Hash and Checksum: Hash<W>.get over a field list with Tofino's CRC8/CRC16/CRC32/CRC64
// (bf-utils' crc_8, crc_16 = CRC-16/ARC, crc_32, crc_64 = ECMA-182 without reflection), a
// CUSTOM CRCPolynomial plain and reversed, IDENTITY (the data's low bits), a CRC wider output
// (the CRC repeated) and a narrower one (its low bits); the parser's Checksum.verify() (true
// when the checksum is wrong) and get() after subtract (the residual), the deparser's
// Checksum.update recomputing the IPv4 checksum and updating it from the residual.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header data_t {
    bit<72> v;  // "123456789", the CRC catalogue's check input
}

header res_t {
    bit<8>  crc8;
    bit<16> crc16;
    bit<32> crc32;
    bit<64> crc64;
    bit<16> ident;
    bit<16> xmodem;
    bit<16> kermit;
    bit<32> crc16x32;
    bit<8>  crc32lo8;
    bit<8>  ck_err;
    bit<16> incr;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    data_t     data;
    res_t      res;
}

struct ig_md_t {
    bool    ck_err;
    bit<16> residual;
}

struct eg_md_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ck;
    Checksum() sub;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ipv4);
        ck.add(hdr.ipv4);
        md.ck_err = ck.verify();
        sub.subtract({hdr.ipv4.ttl, hdr.ipv4.protocol});
        sub.subtract({hdr.ipv4.hdr_checksum});
        md.residual = sub.get();
        pkt.extract(hdr.data);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0, 16w0) xmodem_poly;
    CRCPolynomial<bit<16>>(16w0x1021, true, false, false, 16w0, 16w0) kermit_poly;
    Hash<bit<8>>(HashAlgorithm_t.CRC8) h8;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h32;
    Hash<bit<64>>(HashAlgorithm_t.CRC64) h64;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) hid;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, xmodem_poly) hx;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, kermit_poly) hk;
    Hash<bit<32>>(HashAlgorithm_t.CRC16) h16x32;
    Hash<bit<8>>(HashAlgorithm_t.CRC32) h32lo8;

    apply {
        hdr.res.crc8 = h8.get({hdr.data.v});
        hdr.res.crc16 = h16.get({hdr.data.v});
        hdr.res.crc32 = h32.get({hdr.data.v});
        hdr.res.crc64 = h64.get({hdr.data.v});
        hdr.res.ident = hid.get({hdr.data.v});
        hdr.res.xmodem = hx.get({hdr.data.v});
        hdr.res.kermit = hk.get({hdr.data.v});
        hdr.res.crc16x32 = h16x32.get({hdr.data.v});
        hdr.res.crc32lo8 = h32lo8.get({hdr.data.v});
        hdr.res.ck_err = md.ck_err ? 8w1 : 8w0;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() full;
    Checksum() incr;
    apply {
        hdr.res.incr = incr.update({hdr.ipv4.ttl, hdr.ipv4.protocol, md.residual});
        hdr.ipv4.hdr_checksum = full.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
