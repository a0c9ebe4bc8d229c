//! Unit tests of the sorter's helpers: `strtol`, option mapping, the delay rule and slots.

use super::*;

#[test]
fn strtol_like_c() {
    assert_eq!(strtol("  12abc"), 12);
    assert_eq!(strtol("abc"), 0);
    assert_eq!(strtol("-3"), -3);
    assert_eq!(strtol("+2"), 2);
    assert_eq!(strtol("99999999999999999999999"), i64::MAX);
}

#[test]
fn option_mapping() {
    use TopoMode::*;
    assert_eq!(TopoMode::from_ge_options(None, None), Dfs);
    assert_eq!(TopoMode::from_ge_options(None, Some("1")), Bfs);
    assert_eq!(TopoMode::from_ge_options(Some(""), Some("0")), Dfs);
    assert_eq!(TopoMode::from_ge_options(Some("abc"), Some("0")), Bfs);
    assert_eq!(TopoMode::from_ge_options(Some("2"), Some("1")), Rdfs);
    assert_eq!(TopoMode::from_ge_options(Some("3"), None), StableRdfs);
    assert_eq!(TopoMode::from_ge_options(Some("7"), None), Dfs);
    assert_eq!(TopoMode::from_ge_options(Some("4"), Some("2")), Bfs);
    // 2^32 + 1 truncates to 1 in GE's enum conversion.
    assert_eq!(TopoMode::from_ge_options(Some("4294967297"), None), Dfs);
    assert_eq!(TopoMode::from_ge_options(Some("4294967298"), None), Rdfs);
    assert!(memory_priority_from_ge_option(Some("MemoryPriority")));
    assert!(!memory_priority_from_ge_option(Some("memorypriority")));
}

#[test]
fn delay_rule() {
    let mut o = TopoOptions::new(TopoMode::Rdfs);
    assert!(o.applies_delay());
    o.mode = TopoMode::Dfs;
    assert!(!o.applies_delay());
    o.memory_priority = true;
    assert!(o.applies_delay());
    o.mode = TopoMode::StableRdfs;
    assert!(!o.applies_delay());
    o.delay = Some(true);
    assert!(o.applies_delay());
}

#[test]
fn slots_are_dense_from_one() {
    let mut g = Graph::new("g");
    let a = g.add_node(crate::OpDesc::new("a", "X")).unwrap();
    let b = g.add_node(crate::OpDesc::new("b", "X")).unwrap();
    assert_eq!(slot(a), 1);
    assert_eq!(slot(b), 2);
}
