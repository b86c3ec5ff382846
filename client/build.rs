// The API's messages and both sides' stubs, from proto/g16.proto. protox parses the file in
// Rust, so building needs no protoc: a machine with only the Rust toolchain builds g16.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/g16.proto");
    // With its source info, so the generated code keeps the proto's comments as docs.
    let descriptors = protox::compile(["proto/g16.proto"], ["proto"])?;
    // Chunks as `Bytes`: the client slices one buffer instead of copying each chunk, and the
    // server takes each chunk out of the received frame without a copy.
    tonic_prost_build::configure()
        .bytes(".g16.v1.ProveChunk.data")
        .bytes(".g16.v1.RegisterChunk.data")
        .compile_fds(descriptors)?;
    Ok(())
}
