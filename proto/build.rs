//! Generates Rust types and tonic client/server stubs from `protos/` with
//! protox, a pure-Rust protobuf compiler, so building needs no `protoc`;
//! and, with pbjson, the proto3 JSON form of etcd's messages (what etcd's
//! JSON gateway speaks: proto field names, 64-bit integers as strings,
//! bytes as base64, defaults left out).

const PROTOS: &[&str] = &[
    "mvccpb/kv.proto",
    "authpb/auth.proto",
    "etcdserverpb/rpc.proto",
    "v3lockpb/v3lock.proto",
    "v3electionpb/v3election.proto",
    "rtcdraftpb/raft.proto",
    "rtcdraftpb/peer.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=protos");
    let descriptors = protox::compile(PROTOS, ["protos"])?;
    pbjson_build::Builder::new()
        .register_descriptors(&prost::Message::encode_to_vec(&descriptors))?
        .preserve_proto_field_names()
        .build(&[".mvccpb", ".authpb", ".etcdserverpb", ".v3lockpb", ".v3electionpb"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Keys, values and blobs stay `Bytes` end to end: no copies on the hot path.
        .bytes(".")
        // prost's codec, but txns decode at etcd's nesting (src/codec.rs).
        .codec_path("crate::codec::EtcdCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
