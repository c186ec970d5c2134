//! The HTTP/2 authority mend (`rtcd_proto::authority`) on arbitrary client
//! bytes: it reads them before hyper does, on every plain-text client
//! connection, so it must not panic, and what hyper gets must not depend on
//! how the bytes were split into reads. The first byte picks the split.

use rtcd_proto::authority::Rewriter;

fn through(data: &[u8], chunk: usize) -> Vec<u8> {
    let mut rewriter = Rewriter::default();
    let (mut input, mut output) = (Vec::new(), Vec::new());
    for piece in data.chunks(chunk.max(1)) {
        input.extend_from_slice(piece);
        rewriter.process(&mut input, &mut output);
    }
    // The connection closes: what is held back goes on.
    rewriter.finish(&mut input, &mut output);
    output
}

pub fn run(data: &[u8]) {
    let Some((&split, bytes)) = data.split_first() else { return };
    let whole = through(bytes, bytes.len());
    let pieces = through(bytes, usize::from(split % 64) + 1);
    assert_eq!(whole, pieces, "the output depends on how the input was read");
}
