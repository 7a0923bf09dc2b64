use super::*;

fn get(uri: &str, headers: Headers) -> Pdu {
    Pdu::Get {
        method: GetMethod::Get,
        uri: uri.to_string(),
        headers,
    }
}

#[test]
fn connectionless_get_bytes() {
    let uri = "http://127.0.0.1:8080/hello.wml";
    let pdu = encode_connectionless(7, &get(uri, Headers::default()));
    assert_eq!(&pdu[..3], &[7, 0x40, uri.len() as u8]);
    assert_eq!(&pdu[3..], uri.as_bytes());
    assert_eq!(
        decode_connectionless(&pdu).unwrap(),
        (7, get(uri, Headers::default()))
    );
    let long = format!("http://x/{}", "a".repeat(191));
    let pdu = encode_connectionless(1, &get(&long, Headers::default()));
    assert_eq!(&pdu[2..4], &[0x81, 0x48]);
    assert_eq!(
        decode_connectionless(&pdu[..10]),
        Err(DecodeError::Truncated {
            field: "WSP Get URI"
        })
    );
}

#[test]
fn browser_headers_are_the_well_known_octets() {
    let bytes = Headers::browser("wtlsperf").to_bytes();
    // Accept (0x80): wmlc 0x94, wmlscriptc 0x95, wbmp 0xA1;
    // Accept-Charset (0x81): utf-8 0xEA, iso-8859-1 0x84; Accept-Language (0x83) en 0x99.
    assert_eq!(
        &bytes[..12],
        &[0x80, 0x94, 0x80, 0x95, 0x80, 0xA1, 0x81, 0xEA, 0x81, 0x84, 0x83, 0x99]
    );
    assert_eq!(&bytes[12..], b"\xA9wtlsperf\0");
    let back = Headers::decode(&bytes).unwrap();
    assert_eq!(back, Headers::browser("wtlsperf"));
    let http: Vec<(String, String)> = back.0.iter().map(Header::to_http).collect();
    assert_eq!(
        http[0],
        ("Accept".into(), "application/vnd.wap.wmlc".into())
    );
    assert_eq!(http[3], ("Accept-Charset".into(), "utf-8".into()));
    assert_eq!(http[5], ("Accept-Language".into(), "en".into()));
    assert_eq!(http[6], ("User-Agent".into(), "wtlsperf".into()));
    assert!(back.accepts(&ContentType::WMLC));
    assert!(!back.accepts(&ContentType::Text("text/html".into())));
    assert!(Headers::default().accepts(&ContentType::Text("text/html".into())));
}

#[test]
fn a_long_charset_uses_the_general_form() {
    let h = Header::accept_charset(Charset::UCS_2);
    let bytes = Headers(vec![h.clone()]).to_bytes();
    assert_eq!(bytes, [0x81, 0x03, 0x02, 0x03, 0xE8]);
    assert_eq!(
        Headers::decode(&bytes).unwrap().0[0].http_value(),
        "iso-10646-ucs-2"
    );
    assert_eq!(Header::content_length(300).http_value(), "300");
    assert_eq!(
        Headers(vec![Header::content_length(300)]).to_bytes(),
        [0x8D, 0x02, 0x01, 0x2C]
    );
    // An application header keeps its name and text.
    let app = Header::text("X-Custom", "v");
    assert_eq!(Headers(vec![app.clone()]).to_bytes(), b"X-Custom\0v\0");
    assert_eq!(app.to_http(), ("X-Custom".into(), "v".into()));
    assert_eq!(
        Header::text("Host", "h").name,
        HeaderName::WellKnown(FieldName::new(0x16).unwrap())
    );
}

#[test]
fn status_codes_map_both_ways() {
    for (octet, http) in [
        (0x10, 100),
        (0x20, 200),
        (0x26, 206),
        (0x32, 302),
        (0x44, 404),
        (0x4F, 415),
        (0x50, 416),
        (0x51, 417),
        (0x60, 500),
        (0x62, 502),
        (0x64, 504),
    ] {
        assert_eq!(Status(octet).http(), Some(http), "0x{octet:02x}");
        assert_eq!(Status::from_http(http), Some(Status(octet)), "{http}");
    }
    assert_eq!(Status(0x00).http(), None);
    assert_eq!(Status::from_http(299), None);
    assert_eq!(Status::from_http_or_class(299), Status::OK);
    assert_eq!(Status(0x7A).to_string(), "unassigned WSP status 0x7a");
}

#[test]
fn reply_as_kannel_sends_it() {
    // TID, Reply, 200, headers_len 1, 0x94 (WMLC), body.
    let pdu = [9, 0x04, 0x20, 0x01, 0x94, 0x02, 0x05];
    let (tid, reply) = decode_connectionless(&pdu).unwrap();
    assert_eq!(tid, 9);
    let Pdu::Reply {
        status,
        content_type,
        body,
        ..
    } = &reply
    else {
        panic!("not a reply: {reply:?}")
    };
    assert_eq!(status.http(), Some(200));
    assert_eq!(content_type.to_string(), "application/vnd.wap.wmlc");
    assert_eq!(body, &[2, 5]);
    assert_eq!(encode_connectionless(9, &reply), pdu);
}

#[test]
fn content_type_forms() {
    let mut c = crate::codec::Cursor::new(&[0x03, 0x82, 0x81, 0x83]);
    assert_eq!(ContentType::read(&mut c).unwrap().to_string(), "text/html");
    let mut c = crate::codec::Cursor::new(&[0x06, 5, 1, 2, 3, 4, 5]);
    assert!(matches!(
        ContentType::read(&mut c),
        Err(DecodeError::IntegerTooLong { .. })
    ));
    assert_eq!(
        ContentType::from_name("text/vnd.wap.wml; charset=utf-8"),
        ContentType::WML
    );
    assert_eq!(
        ContentType::from_name("text/x-thing"),
        ContentType::Text("text/x-thing".into())
    );
}

#[test]
fn connect_and_negotiation() {
    let client = Capabilities {
        client_sdu_size: Some(3000),
        server_sdu_size: Some(3000),
        protocol_options: Some(0xE0),
        method_mor: Some(4),
        push_mor: Some(1),
        other: vec![(0x07, vec![1, 2])],
    };
    let connect = Pdu::Connect {
        version: Version::V1_0,
        capabilities: client.clone(),
        headers: Headers::browser("t"),
    };
    let bytes = connect.encode();
    assert_eq!(&bytes[..2], &[0x01, 0x10]);
    assert_eq!(Pdu::decode(&bytes).unwrap(), connect);
    let server = Capabilities {
        client_sdu_size: Some(1400),
        server_sdu_size: Some(65535),
        protocol_options: Some(0x00),
        method_mor: Some(1),
        push_mor: Some(0),
        other: vec![],
    };
    let agreed = client.negotiate(&server);
    assert_eq!(agreed.client_sdu_size, Some(1400));
    assert_eq!(agreed.server_sdu_size, Some(3000));
    assert_eq!(agreed.protocol_options, Some(0));
    assert_eq!(agreed.method_mor, Some(1));
    assert!(agreed.other.is_empty());
    let reply = Pdu::ConnectReply {
        session_id: 0x1234,
        capabilities: agreed,
        headers: Headers::default(),
    };
    assert_eq!(Pdu::decode(&reply.encode()).unwrap(), reply);
    for pdu in [
        Pdu::Disconnect { session_id: 0x1234 },
        Pdu::Suspend { session_id: 3 },
        Pdu::Resume {
            session_id: 3,
            capabilities: Capabilities::default(),
            headers: Headers(vec![Header::user_agent("x")]),
        },
    ] {
        assert_eq!(Pdu::decode(&pdu.encode()).unwrap(), pdu);
    }
}

#[test]
fn post_carries_its_content_type_and_body() {
    let post = Pdu::Post {
        method: PostMethod::Post,
        uri: "http://o/form".into(),
        content_type: ContentType::well_known("application/x-www-form-urlencoded").unwrap(),
        headers: Headers(vec![Header::content_length(3)]),
        body: b"a=1".to_vec(),
    };
    let bytes = post.encode();
    assert_eq!(&bytes[..3], &[0x60, 13, 3]);
    assert_eq!(Pdu::decode(&bytes).unwrap(), post);
}

#[test]
fn malformed_pdus_name_what_is_wrong() {
    assert_eq!(
        Pdu::decode(&[0x7E]),
        Err(DecodeError::Unassigned {
            field: "WSP PDU type",
            value: 0x7E
        })
    );
    assert_eq!(
        Pdu::decode(&[0x05, 0x01, 0x00]),
        Err(DecodeError::Trailing {
            field: "WSP PDU",
            extra: 1
        })
    );
    assert_eq!(
        Headers::decode(&[0x81]),
        Err(DecodeError::Truncated {
            field: "WSP header value"
        })
    );
    assert!(matches!(
        Headers::decode(&[0xFF, 0x80]),
        Err(DecodeError::Unassigned { .. })
    ));
    assert!(matches!(
        Headers::decode(&[0x03, 0x80]),
        Err(DecodeError::Unassigned {
            field: "WSP header code page shift",
            ..
        })
    ));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn content_type() -> impl Strategy<Value = ContentType> {
        prop_oneof![
            (0u8..0x7F).prop_map(ContentType::WellKnown),
            (0x0100u32..0xFFFF_FFFF).prop_map(ContentType::Registered),
            "[a-z]{1,12}/[a-z.+-]{1,20}".prop_map(ContentType::Text),
        ]
    }

    fn header() -> impl Strategy<Value = Header> {
        prop_oneof![
            content_type().prop_map(|t| Header::accept(&t)),
            (0u32..3000).prop_map(|c| Header::accept_charset(Charset(c))),
            "[ -~]{1,40}"
                .prop_filter("no leading quote", |s| !s.starts_with('\u{7f}'))
                .prop_map(|s| Header::user_agent(&s)),
            any::<u64>().prop_map(Header::content_length),
            ("[A-Za-z][A-Za-z-]{0,15}", "[ -~]{0,30}")
                .prop_map(|(n, v)| Header::text(&format!("X-{n}"), &v)),
        ]
    }

    fn headers() -> impl Strategy<Value = Headers> {
        proptest::collection::vec(header(), 0..8).prop_map(Headers)
    }

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Pdu::decode(&bytes);
            let _ = decode_connectionless(&bytes);
            if let Ok(h) = Headers::decode(&bytes) {
                for header in &h.0 { let _ = header.to_http(); }
            }
        }

        #[test]
        fn replies_round_trip(
            tid: u8,
            status: u8,
            content_type in content_type(),
            headers in headers(),
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let reply = Pdu::Reply { status: Status(status), content_type, headers, body };
            prop_assert_eq!(decode_connectionless(&encode_connectionless(tid, &reply)).unwrap(), (tid, reply));
        }

        #[test]
        fn requests_round_trip(uri in "[ -~]{0,300}", headers in headers(), body in proptest::collection::vec(any::<u8>(), 0..100), content_type in content_type()) {
            let g = get(&uri, headers.clone());
            prop_assert_eq!(Pdu::decode(&g.encode()).unwrap(), g);
            let p = Pdu::Post { method: PostMethod::Put, uri, content_type, headers, body };
            prop_assert_eq!(Pdu::decode(&p.encode()).unwrap(), p);
        }
    }
}
