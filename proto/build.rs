//! Generates Rust types and tonic client/server stubs from `protos/` with
//! protox, a pure-Rust protobuf compiler, so building needs no `protoc`.

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
