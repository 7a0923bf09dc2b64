use super::*;
use crate::wbxml::token;

const PAGE: &str = r#"<?xml version="1.0"?>
<!DOCTYPE wml PUBLIC "-//WAPFORUM//DTD WML 1.1//EN" "http://www.wapforum.org/DTD/wml_1.1.xml">
<wml>
  <card id="main" title="Hello">
    <p>Hi</p>
  </card>
</wml>
"#;

#[test]
fn a_small_page_compiles_to_the_expected_tokens() {
    let wmlc = compile(PAGE).unwrap();
    let mut expected = vec![0x01, 0x04, 0x6A, 0x00];
    expected.push(0x3F | token::HAS_CONTENT); // wml
    expected.push(0x27 | token::HAS_CONTENT | token::HAS_ATTRIBUTES); // card
    expected.extend([0x55, token::STR_I]); // id=
    expected.extend(b"main\0");
    expected.extend([0x36, token::STR_I]); // title=
    expected.extend(b"Hello\0");
    expected.push(token::END);
    expected.push(0x20 | token::HAS_CONTENT); // p
    expected.push(token::STR_I);
    expected.extend(b"Hi\0");
    expected.extend([token::END, token::END, token::END]);
    assert_eq!(wmlc, expected);
    let text = decompile(&wmlc).unwrap();
    assert!(
        text.contains("<card id=\"main\" title=\"Hello\">"),
        "{text}"
    );
    assert!(text.contains("<p>Hi</p>"), "{text}");
    assert_eq!(parse(&text).unwrap(), parse(PAGE).unwrap());
}

#[test]
fn attribute_prefixes_values_and_variables_use_their_tokens() {
    let page = r#"<wml><card newcontext="true"><do type="accept"><go href="http://www.example.com/a?x=$(x:escape)&amp;y=$y" method="post"/></do><p>cost: $$5 &nbsp;</p></card></wml>"#;
    let wmlc = compile(page).unwrap();
    // newcontext="true" is the single token 0x23; type="accept" is 0x38.
    assert!(wmlc.windows(2).any(|w| w == [0x27 | 0xC0, 0x23]));
    assert!(wmlc.contains(&0x38));
    // href="http://..." starts with 0x4B, then "www." (0xA1) and ".com/" (0x85).
    let go = wmlc.iter().position(|b| *b == 0x4B).unwrap();
    assert_eq!(wmlc[go + 1], 0xA1);
    assert!(wmlc.contains(&0x85));
    assert!(wmlc.windows(2).any(|w| w == [token::EXT_I_0, b'x']));
    assert!(wmlc.windows(2).any(|w| w == [token::EXT_I_2, b'y']));
    let back = decompile(&wmlc).unwrap();
    assert!(
        back.contains("href=\"http://www.example.com/a?x=$(x:escape)&amp;y=$(y)\""),
        "{back}"
    );
    assert!(back.contains("cost: $$5 &nbsp;"), "{back}");
    assert_eq!(parse(&back).unwrap(), parse(page).unwrap());
}

#[test]
fn unknown_elements_and_attributes_go_to_the_string_table() {
    let page = r#"<wml><card><x-thing data-a="1"/></card></wml>"#;
    let wmlc = compile(page).unwrap();
    // The string table holds both names.
    assert_eq!(wmlc[3], 15);
    assert_eq!(&wmlc[4..19], b"x-thing\0data-a\0");
    assert_eq!(
        parse(&decompile(&wmlc).unwrap()).unwrap(),
        parse(page).unwrap()
    );
}

#[test]
fn bad_input_is_refused_precisely() {
    assert!(matches!(
        compile("<wml><p></wml>"),
        Err(CompileError::Xml { .. })
    ));
    assert_eq!(
        compile("<wml>&copy;</wml>"),
        Err(CompileError::UnknownEntity("copy".into()))
    );
    assert_eq!(compile(""), Err(CompileError::NoRoot));
    assert_eq!(
        decompile(&[0x01, 0x04, 0x6A, 0x00, 0x3A]),
        Err(DecodeError::Unassigned {
            field: "WBXML tag",
            value: 0x3A
        })
    );
    assert_eq!(
        decompile(&[0x01, 0x04, 0x6A, 0x00, 0x7F]),
        Err(DecodeError::Truncated {
            field: "WBXML content"
        })
    );
    // Nesting beyond the limit is refused, not followed.
    let mut deep = vec![0x01, 0x04, 0x6A, 0x00];
    deep.extend(std::iter::repeat_n(0x60, 100));
    assert!(matches!(
        decompile(&deep),
        Err(DecodeError::TooLarge { .. })
    ));
    let deep_text = "<p>".repeat(100);
    assert_eq!(compile(&deep_text), Err(CompileError::TooDeep(64)));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = Piece> {
        "[a-zA-Z0-9&<>$\"'.]{1,8}( [a-zA-Z0-9&<>$.]{1,8}){0,3}".prop_map(Piece::Text)
    }

    fn variable() -> impl Strategy<Value = Piece> {
        (
            "[a-z_][a-z0-9_]{0,6}",
            prop_oneof![
                Just(Escaping::None),
                Just(Escaping::Escape),
                Just(Escaping::Unescape)
            ],
        )
            .prop_map(|(name, escaping)| Piece::Variable { name, escaping })
    }

    fn pieces() -> impl Strategy<Value = Vec<Piece>> {
        proptest::collection::vec(prop_oneof![3 => text(), 1 => variable()], 1..4).prop_map(|ps| {
            let mut out = Vec::new();
            for p in ps {
                push_piece(&mut out, p);
            }
            out
        })
    }

    fn attribute_value() -> impl Strategy<Value = Vec<Piece>> {
        prop_oneof![
            "[ -~]{0,24}".prop_map(|s| pieces_of(&s)),
            Just(pieces_of("http://www.example.org/index.wml")),
            Just(pieces_of("accept")),
            Just(pieces_of("true")),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => proptest::sample::select(TAGS.iter().map(|(_, n)| n.to_string()).collect::<Vec<_>>()),
            1 => "x-[a-z]{1,5}",
        ]
    }

    fn attributes() -> impl Strategy<Value = Vec<(String, Vec<Piece>)>> {
        let names: Vec<String> = ATTRIBUTE_STARTS
            .iter()
            .map(|(_, n, _)| n.to_string())
            .collect();
        proptest::collection::btree_map(
            prop_oneof![4 => proptest::sample::select(names), 1 => "data-[a-z]{1,4}"],
            attribute_value(),
            0..4,
        )
        .prop_map(|m| m.into_iter().collect())
    }

    fn element() -> impl Strategy<Value = Element> {
        let leaf = (name(), attributes()).prop_map(|(name, attributes)| Element {
            name,
            attributes,
            children: vec![],
        });
        leaf.prop_recursive(4, 40, 5, |inner| {
            (
                name(),
                attributes(),
                proptest::collection::vec(
                    prop_oneof![inner.prop_map(Node::Element), pieces().prop_map(Node::Text)],
                    0..5,
                ),
            )
                .prop_map(|(name, attributes, kids)| {
                    let mut children: Vec<Node> = Vec::new();
                    for kid in kids {
                        match (children.last_mut(), kid) {
                            (Some(Node::Text(last)), Node::Text(more)) => {
                                for p in more {
                                    push_piece(last, p);
                                }
                            }
                            (_, kid) => children.push(kid),
                        }
                    }
                    Element {
                        name,
                        attributes,
                        children,
                    }
                })
        })
    }

    proptest! {
        /// WML printed, compiled, decompiled and parsed again is the same tree.
        #[test]
        fn wml_round_trips_through_wmlc(root in element()) {
            let doc = Document { version: 0x01, public_id: PUBLIC_ID_WML_1_1, charset: 106, root };
            let text = print(&doc);
            prop_assert_eq!(&parse(&text).unwrap(), &doc, "{}", text);
            let wmlc = compile(&text).unwrap();
            prop_assert_eq!(&decode(&wmlc).unwrap(), &doc);
            prop_assert_eq!(decompile(&wmlc).unwrap(), text);
        }

        #[test]
        fn decompiling_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decompile(&bytes);
        }

        #[test]
        fn compiling_arbitrary_text_never_panics(text in "[<>a-z/\"=&;$() ]{0,80}") {
            let _ = compile(&text);
        }
    }
}
