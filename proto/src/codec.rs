//! The gRPC codec of every generated service: prost's, except that a
//! `TxnRequest` is decoded by [`decode_txn`].
//!
//! Why: a txn nests two protobuf messages per level (`TxnRequest` →
//! `RequestOp` → `TxnRequest`), and prost refuses anything deeper than 100
//! messages, so prost alone answers `INTERNAL "failed to decode Protobuf
//! message"` from 50 levels on. etcd decodes any nesting and then applies its
//! op budget (`--max-txn-ops`, 128 by default), which allows up to 128 levels.
//! [`decode_txn`] follows prost's semantics field for field but counts txn
//! levels itself, up to [`MAX_TXN_NESTING`].

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use bytes::{Buf, Bytes};
use prost::Message;
use prost::encoding::{DecodeContext, WireType, decode_key, skip_field};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic_prost::ProstEncoder;

use crate::etcdserverpb::{Compare, RequestOp, TxnRequest, request_op};

/// Txn levels [`decode_txn`] accepts: twice what etcd's default op budget
/// allows (`--max-txn-ops` 128 lets through at most 129 levels). Deeper txns
/// are refused while decoding, with etcd's budget error, because checking,
/// applying, answering and dropping a txn all recurse once per level and a
/// request must not decide how deep a server thread's stack goes.
pub const MAX_TXN_NESTING: usize = 256;

/// etcd's `ErrGRPCTooManyOps` text (the server's `errors.rs` maps the store's
/// `TooManyOps` to the same; a test there checks they agree).
pub const TOO_MANY_OPS: &str = "etcdserver: too many operations in txn request";

/// Why [`decode_txn`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnDecodeError {
    /// Not a valid encoding (prost's own error, as prost would report it).
    Protobuf(prost::DecodeError),
    /// Nested deeper than [`MAX_TXN_NESTING`].
    TooDeep,
}

impl From<prost::DecodeError> for TxnDecodeError {
    fn from(e: prost::DecodeError) -> Self {
        TxnDecodeError::Protobuf(e)
    }
}

impl From<TxnDecodeError> for Status {
    fn from(e: TxnDecodeError) -> Status {
        match e {
            TxnDecodeError::Protobuf(e) => prost_error(e),
            TxnDecodeError::TooDeep => Status::invalid_argument(TOO_MANY_OPS),
        }
    }
}

/// tonic's mapping of a prost error, kept for every other message.
fn prost_error(e: prost::DecodeError) -> Status {
    Status::internal(e.to_string())
}

/// Decodes a `TxnRequest` like `TxnRequest::decode`, at any nesting up to
/// [`MAX_TXN_NESTING`] levels.
pub fn decode_txn(mut buf: Bytes) -> Result<TxnRequest, TxnDecodeError> {
    let mut txn = TxnRequest::default();
    merge_txn(&mut txn, &mut buf, 1)?;
    Ok(txn)
}

/// The length-delimited payload of the field whose key was just read, with
/// prost's own checks and errors (wire type, length, underflow).
fn delimited(buf: &mut Bytes, wire_type: WireType) -> Result<Bytes, prost::DecodeError> {
    let mut field = Bytes::new();
    prost::encoding::bytes::merge(wire_type, &mut field, buf, DecodeContext::default())?;
    Ok(field)
}

/// Merges one encoded `TxnRequest` into `txn` (repeated fields append, as
/// protobuf merges). `level` is this txn's nesting level, 1 for the outer.
fn merge_txn(txn: &mut TxnRequest, buf: &mut Bytes, level: usize) -> Result<(), TxnDecodeError> {
    if level > MAX_TXN_NESTING {
        return Err(TxnDecodeError::TooDeep);
    }
    while buf.has_remaining() {
        let (tag, wire_type) = decode_key(buf)?;
        match tag {
            1 => txn.compare.push(Compare::decode(delimited(buf, wire_type)?)?),
            2 => txn.success.push(decode_op(delimited(buf, wire_type)?, level)?),
            3 => txn.failure.push(decode_op(delimited(buf, wire_type)?, level)?),
            _ => skip_field(wire_type, tag, buf, DecodeContext::default())?,
        }
    }
    Ok(())
}

/// One `RequestOp` of a txn at `level`. Its `request` is a oneof of
/// messages: a field of the variant already held merges into it, another
/// variant replaces it (prost's oneof semantics).
fn decode_op(mut buf: Bytes, level: usize) -> Result<RequestOp, TxnDecodeError> {
    use request_op::Request;
    let mut request: Option<Request> = None;
    while buf.has_remaining() {
        let (tag, wire_type) = decode_key(&mut buf)?;
        if !(1..=4).contains(&tag) {
            skip_field(wire_type, tag, &mut buf, DecodeContext::default())?;
            continue;
        }
        let field = delimited(&mut buf, wire_type)?;
        request = Some(match (tag, request.take()) {
            (1, Some(Request::RequestRange(mut r))) => {
                merged(&mut r, field).map(|()| Request::RequestRange(r))?
            }
            (1, _) => Request::RequestRange(Message::decode(field)?),
            (2, Some(Request::RequestPut(mut r))) => {
                merged(&mut r, field).map(|()| Request::RequestPut(r))?
            }
            (2, _) => Request::RequestPut(Message::decode(field)?),
            (3, Some(Request::RequestDeleteRange(mut r))) => {
                merged(&mut r, field).map(|()| Request::RequestDeleteRange(r))?
            }
            (3, _) => Request::RequestDeleteRange(Message::decode(field)?),
            (_, held) => {
                let mut inner = match held {
                    Some(Request::RequestTxn(inner)) => inner,
                    _ => TxnRequest::default(),
                };
                let mut field = field;
                merge_txn(&mut inner, &mut field, level + 1)?;
                Request::RequestTxn(inner)
            }
        });
    }
    Ok(RequestOp { request })
}

fn merged(message: &mut impl Message, field: Bytes) -> Result<(), prost::DecodeError> {
    message.merge(field)
}

/// prost's codec with [`decode_txn`] for `TxnRequest`s.
#[derive(Debug, Clone)]
pub struct EtcdCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for EtcdCodec<T, U> {
    fn default() -> Self {
        EtcdCodec(PhantomData)
    }
}

impl<T, U> Codec for EtcdCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = EtcdDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        EtcdDecoder(PhantomData)
    }
}

#[derive(Debug, Clone)]
pub struct EtcdDecoder<U>(PhantomData<U>);

impl<U: Message + Default + 'static> Decoder for EtcdDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        // The generated services are generic over their messages; only the
        // txn needs its own decoder, so it is picked out by type.
        if TypeId::of::<U>() == TypeId::of::<TxnRequest>() {
            let txn = decode_txn(buf.copy_to_bytes(buf.remaining()))?;
            let txn: Box<dyn Any> = Box::new(txn);
            return match txn.downcast::<U>() {
                Ok(txn) => Ok(Some(*txn)),
                Err(_) => Err(Status::internal("txn decoder: type mismatch")),
            };
        }
        U::decode(buf).map(Some).map_err(prost_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etcdserverpb::{DeleteRangeRequest, PutRequest, RangeRequest};

    fn put(key: &str) -> RequestOp {
        RequestOp {
            request: Some(request_op::Request::RequestPut(PutRequest {
                key: Bytes::copy_from_slice(key.as_bytes()),
                ..Default::default()
            })),
        }
    }

    fn chain(depth: usize) -> TxnRequest {
        let mut txn = TxnRequest { success: vec![put("k")], ..Default::default() };
        for _ in 1..depth {
            txn = TxnRequest {
                failure: vec![RequestOp { request: Some(request_op::Request::RequestTxn(txn)) }],
                ..Default::default()
            };
        }
        txn
    }

    fn same_as_prost(bytes: &[u8]) {
        let ours = decode_txn(Bytes::copy_from_slice(bytes));
        let prost = TxnRequest::decode(bytes);
        match (ours, prost) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(TxnDecodeError::Protobuf(_)), Err(_)) => {}
            (a, b) => panic!("{bytes:?}: ours {a:?}, prost {b:?}"),
        }
    }

    #[test]
    fn decodes_what_prost_decodes_within_its_limit() {
        same_as_prost(&chain(1).encode_to_vec());
        same_as_prost(&chain(40).encode_to_vec());
        let txn = TxnRequest {
            compare: vec![Compare { key: "c".into(), ..Default::default() }],
            success: vec![
                put("a"),
                RequestOp {
                    request: Some(request_op::Request::RequestRange(RangeRequest {
                        key: "r".into(),
                        ..Default::default()
                    })),
                },
            ],
            failure: vec![
                RequestOp {
                    request: Some(request_op::Request::RequestDeleteRange(DeleteRangeRequest {
                        key: "d".into(),
                        ..Default::default()
                    })),
                },
                RequestOp { request: None },
                RequestOp { request: Some(request_op::Request::RequestTxn(chain(3))) },
            ],
        };
        let bytes = txn.encode_to_vec();
        same_as_prost(&bytes);
        // Truncated at every length: the same refusals (or prefixes) as prost.
        for end in 0..bytes.len() {
            same_as_prost(&bytes[..end]);
        }
    }

    #[test]
    fn merges_repeated_oneof_fields_as_prost_does() {
        let mut bytes = put("a").encode_to_vec();
        // The same variant twice merges; another variant replaces.
        bytes.extend(put("b").encode_to_vec());
        let txn_op = RequestOp { request: Some(request_op::Request::RequestTxn(chain(2))) };
        let mut op = bytes.clone();
        op.extend(txn_op.encode_to_vec());
        op.extend(txn_op.encode_to_vec());
        op.extend([0x28, 0x01]); // unknown varint field 5
        let mut txn = Vec::new();
        prost::encoding::bytes::encode(2, &op, &mut txn);
        prost::encoding::bytes::encode(3, &bytes, &mut txn);
        same_as_prost(&txn);
        // A known field with the wrong wire type is an error in both.
        same_as_prost(&[0x10, 0x01]);
    }

    #[test]
    fn nesting_beyond_prost_and_up_to_the_bound_decodes() {
        for depth in [50, 51, 128, 129, MAX_TXN_NESTING] {
            let txn = chain(depth);
            assert!(decode_txn(txn.encode_to_vec().into()) == Ok(txn), "depth {depth}");
        }
        assert_eq!(
            decode_txn(chain(MAX_TXN_NESTING + 1).encode_to_vec().into()),
            Err(TxnDecodeError::TooDeep)
        );
        let status = Status::from(TxnDecodeError::TooDeep);
        assert_eq!((status.code(), status.message()), (tonic::Code::InvalidArgument, TOO_MANY_OPS));
    }
}
