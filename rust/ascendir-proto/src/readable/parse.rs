//! The reader's first half: the text of a readable dump into its lines' parts (graph sections,
//! node lines, `get_element` lines, `return` lines), with the place of each.

use ascendir_ir::AttrValue;

use super::value::{scalar_from_token, tensor_from_items, tensor_from_marker};
use super::ReadableError;

/// Deepest list nesting an attribute value may have (`{{1, 2}, {3}}` is 2).
const MAX_LIST_DEPTH: usize = 2;

/// A 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
}

/// An attribute's value as written: a value, or `%name` naming a subgraph.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrText {
    /// An ordinary value.
    Value(AttrValue),
    /// A subgraph instance name.
    Graph(String),
}

/// `%name : [#users=N] = Node[type=T] (inputs = (...), attrs = {...})`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLine {
    /// Where the line starts.
    pub pos: Pos,
    /// Node name.
    pub name: String,
    /// Number of outputs.
    pub outputs: usize,
    /// Op type.
    pub op_type: String,
    /// `(parameter, value name, place)`.
    pub inputs: Vec<(String, String, Pos)>,
    /// `(attribute, value, place)`.
    pub attrs: Vec<(String, AttrText, Pos)>,
}

/// `%ret : [#users=N] = get_element[node=%n](i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct GetLine {
    /// Where the line starts.
    pub pos: Pos,
    /// The output's name.
    pub name: String,
    /// The node it is an output of.
    pub node: String,
    /// The output index.
    pub index: usize,
}

/// One `graph("name"):` section.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Section {
    /// The graph name.
    pub name: String,
    /// Where the header is.
    pub pos: Option<Pos>,
    /// Node lines in order.
    pub nodes: Vec<NodeLine>,
    /// `get_element` lines in order.
    pub gets: Vec<GetLine>,
    /// The `return` line's values (`(value name, place)`), if it has one.
    pub ret: Option<Vec<(String, Pos)>>,
}

/// A cursor over one line.
struct Cur {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Cur {
    fn new(text: &str, line: usize) -> Self {
        Cur {
            chars: text.chars().collect(),
            at: 0,
            line,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.at + 1,
        }
    }

    fn err(&self, message: impl Into<String>) -> ReadableError {
        let p = self.pos();
        ReadableError::Syntax {
            line: p.line,
            column: p.column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        let n = s.chars().count();
        let matches = self.chars.len() >= self.at + n
            && self.chars[self.at..self.at + n]
                .iter()
                .copied()
                .eq(s.chars());
        if matches {
            self.at += n;
        }
        matches
    }

    fn expect(&mut self, s: &str) -> Result<(), ReadableError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{s}'")))
        }
    }

    /// Characters up to (not including) the first one in `stop` or whitespace; non-empty.
    fn token(&mut self, stop: &str, what: &str) -> Result<String, ReadableError> {
        self.ws();
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !stop.contains(c))
        {
            self.at += 1;
        }
        if self.at == start {
            return Err(self.err(format!("expected {what}")));
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    fn number(&mut self, what: &str) -> Result<usize, ReadableError> {
        let p = self.pos();
        let tok = self.token(",)]}", what)?;
        tok.parse::<usize>().map_err(|_| ReadableError::Syntax {
            line: p.line,
            column: p.column,
            message: format!("{what} '{tok}' is not a count"),
        })
    }

    fn end(&mut self) -> Result<(), ReadableError> {
        self.ws();
        match self.peek() {
            None => Ok(()),
            Some(c) => Err(self.err(format!("unexpected '{c}' at the end of the line"))),
        }
    }
}

/// The sections of `text`.
pub fn sections(text: &str) -> Result<Vec<Section>, ReadableError> {
    let mut out: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.trim();
        if body.is_empty() {
            continue;
        }
        let mut cur = Cur::new(raw, line);
        if body.starts_with("graph(") {
            out.push(header(&mut cur)?);
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(cur.err("expected 'graph(\"name\"):' before the first node"));
        };
        if body.starts_with("return") {
            if section.ret.is_some() {
                return Err(cur.err("a second 'return' line in one graph"));
            }
            section.ret = Some(ret_line(&mut cur)?);
        } else if section.ret.is_some() {
            return Err(cur.err("a node line after the graph's 'return' line"));
        } else {
            value_line(&mut cur, section)?;
        }
    }
    if out.is_empty() {
        return Err(ReadableError::Syntax {
            line: 1,
            column: 1,
            message: "no 'graph(\"name\"):' section".to_string(),
        });
    }
    Ok(out)
}

/// `graph("name"):`.
fn header(cur: &mut Cur) -> Result<Section, ReadableError> {
    let pos = cur.pos();
    cur.expect("graph(\"")?;
    let rest: String = cur.chars[cur.at..].iter().collect();
    let trimmed = rest.trim_end();
    let Some(name) = trimmed.strip_suffix("\"):") else {
        return Err(cur.err("expected the graph name and '\"):' to end the line"));
    };
    Ok(Section {
        name: name.to_string(),
        pos: Some(pos),
        ..Section::default()
    })
}

/// `return (%a)` / `return (output_0=%a, output_1=%b)`.
fn ret_line(cur: &mut Cur) -> Result<Vec<(String, Pos)>, ReadableError> {
    cur.expect("return")?;
    cur.expect("(")?;
    let mut items = Vec::new();
    if !cur.eat(")") {
        loop {
            cur.ws();
            if cur.peek() != Some('%') {
                cur.token("=", "an output name")?;
                cur.expect("=")?;
            }
            cur.expect("%")?;
            let pos = cur.pos();
            items.push((cur.token(",)", "a value name")?, pos));
            if cur.eat(")") {
                break;
            }
            cur.expect(",")?;
        }
    }
    cur.end()?;
    Ok(items)
}

/// A node line or a `get_element` line.
fn value_line(cur: &mut Cur, section: &mut Section) -> Result<(), ReadableError> {
    cur.ws();
    let pos = cur.pos();
    cur.expect("%")?;
    let name = cur.token(":", "a name")?;
    cur.expect(":")?;
    cur.expect("[")?;
    let _ = cur.eat("#");
    cur.expect("users=")?;
    let outputs = cur.number("the user count")?;
    cur.expect("]")?;
    cur.expect("=")?;
    if cur.eat("get_element[node=%") {
        let node = cur.token("]", "a node name")?;
        cur.expect("]")?;
        cur.expect("(")?;
        let index = cur.number("the output index")?;
        cur.expect(")")?;
        cur.end()?;
        section.gets.push(GetLine {
            pos,
            name,
            node,
            index,
        });
        return Ok(());
    }
    cur.expect("Node[type=")?;
    let op_type = cur.token("]", "an op type")?;
    cur.expect("]")?;
    cur.expect("(")?;
    let mut node = NodeLine {
        pos,
        name,
        outputs,
        op_type,
        inputs: Vec::new(),
        attrs: Vec::new(),
    };
    if cur.eat("inputs") {
        cur.expect("=")?;
        node.inputs = inputs(cur)?;
        if !cur.eat(",") {
            cur.expect(")")?;
            cur.end()?;
            section.nodes.push(node);
            return Ok(());
        }
    }
    if cur.eat("attrs") {
        cur.expect("=")?;
        node.attrs = attrs(cur)?;
    }
    cur.expect(")")?;
    cur.end()?;
    section.nodes.push(node);
    Ok(())
}

/// `(x=%a, y=%b)`.
fn inputs(cur: &mut Cur) -> Result<Vec<(String, String, Pos)>, ReadableError> {
    cur.expect("(")?;
    let mut out = Vec::new();
    if cur.eat(")") {
        return Ok(out);
    }
    loop {
        cur.ws();
        let pos = cur.pos();
        let param = cur.token("=", "an input name")?;
        cur.expect("=")?;
        cur.expect("%")?;
        let value = cur.token(",)", "a value name")?;
        out.push((param, value, pos));
        if cur.eat(")") {
            return Ok(out);
        }
        cur.expect(",")?;
    }
}

/// `{name: value, ...}`.
fn attrs(cur: &mut Cur) -> Result<Vec<(String, AttrText, Pos)>, ReadableError> {
    cur.expect("{")?;
    let mut out = Vec::new();
    if cur.eat("}") {
        return Ok(out);
    }
    loop {
        cur.ws();
        let pos = cur.pos();
        let name = cur.token(":", "an attribute name")?;
        cur.expect(":")?;
        cur.ws();
        let value = if cur.eat("%") {
            AttrText::Graph(cur.token(",}", "a subgraph name")?)
        } else {
            AttrText::Value(value(cur, 0)?)
        };
        out.push((name, value, pos));
        if cur.eat("}") {
            return Ok(out);
        }
        cur.expect(",")?;
    }
}

/// One attribute value (`depth` = lists it is inside).
fn value(cur: &mut Cur, depth: usize) -> Result<AttrValue, ReadableError> {
    cur.ws();
    match cur.peek() {
        Some('"') => {
            cur.at += 1;
            let start = cur.at;
            let Some(end) = string_end(&cur.chars, start, depth) else {
                cur.at = start - 1;
                return Err(cur.err("unterminated string"));
            };
            let s: String = cur.chars[start..end].iter().collect();
            cur.at = end + 1;
            Ok(AttrValue::String(s))
        }
        Some('{') if depth < MAX_LIST_DEPTH => list(cur, depth + 1),
        Some('{') => Err(cur.err("lists nest at most two deep")),
        Some('[') => {
            cur.at += 1;
            let start = cur.at;
            while cur.peek().is_some_and(|c| c != ']') {
                cur.at += 1;
            }
            if cur.peek().is_none() {
                return Err(cur.err("unterminated tensor value"));
            }
            let inner: String = cur.chars[start..cur.at].iter().collect();
            let items: Vec<&str> = inner.split_whitespace().collect();
            let tensor = tensor_from_items(&items)
                .ok_or_else(|| cur.err(format!("'[{inner}]' is not a tensor value")))?;
            cur.at += 1;
            Ok(AttrValue::Tensor(tensor))
        }
        Some('<') => {
            let tok = cur.token(",}", "a value")?;
            let marker = tok.trim_start_matches('<').trim_end_matches('>');
            tensor_from_marker(marker)
                .map(AttrValue::Tensor)
                .ok_or_else(|| cur.err(format!("unknown value '{tok}'")))
        }
        _ => {
            let p = cur.pos();
            let tok = cur.token(",}", "a value")?;
            scalar_from_token(&tok).ok_or(ReadableError::Syntax {
                line: p.line,
                column: p.column,
                message: format!("'{tok}' is not a value"),
            })
        }
    }
}

/// Where the string that starts at `start` ends. GE writes strings between quotes without
/// escaping, so a string may hold quotes (JSON configurations do): its closing quote is the
/// first one after which the line goes on as the format does after a value `depth` lists deep
/// (the next attribute, the end of the node, the next list item or the list's end). Each
/// candidate is judged from a few characters after it, so a line is read in linear time.
fn string_end(chars: &[char], start: usize, depth: usize) -> Option<usize> {
    let last = chars.iter().rposition(|c| !c.is_whitespace());
    let mut first = None;
    for i in (start..chars.len()).filter(|&i| chars[i] == '"') {
        first.get_or_insert(i);
        if goes_on_after_value(chars, i + 1, depth, last) {
            return Some(i);
        }
    }
    first
}

/// Whether the line may go on at `at` after a value `depth` lists deep (`last` = index of
/// the line's last non-blank character).
fn goes_on_after_value(chars: &[char], at: usize, depth: usize, last: Option<usize>) -> bool {
    let starts = |s: &str| {
        let n = s.chars().count();
        chars.len() >= at + n && chars[at..at + n].iter().copied().eq(s.chars())
    };
    if depth > 0 {
        if starts(", \"") || starts(", {") {
            return true;
        }
        return starts("}") && goes_on_after_value(chars, at + 1, depth - 1, last);
    }
    if starts("})") && last == Some(at + 1) {
        return true;
    }
    if !starts(", ") {
        return false;
    }
    let name_start = at + 2;
    let mut k = name_start;
    while k < chars.len() && !matches!(chars[k], ':' | '"' | ',') && !chars[k].is_whitespace() {
        k += 1;
    }
    k > name_start
        && (chars[name_start].is_alphabetic() || chars[name_start] == '_')
        && chars.get(k) == Some(&':')
        && chars.get(k + 1) == Some(&' ')
}

/// `{a, b, ...}` of one kind.
fn list(cur: &mut Cur, depth: usize) -> Result<AttrValue, ReadableError> {
    let pos = cur.pos();
    cur.expect("{")?;
    let mut items = Vec::new();
    if !cur.eat("}") {
        loop {
            items.push(value(cur, depth)?);
            if cur.eat("}") {
                break;
            }
            cur.expect(",")?;
        }
    }
    homogeneous(items).ok_or(ReadableError::Syntax {
        line: pos.line,
        column: pos.column,
        message: "a list mixes values of different kinds".to_string(),
    })
}

/// The list value of `items`, all of one kind (ints in a float list count as floats).
fn homogeneous(items: Vec<AttrValue>) -> Option<AttrValue> {
    fn all<T>(items: &[AttrValue], f: impl Fn(&AttrValue) -> Option<T>) -> Option<Vec<T>> {
        items.iter().map(f).collect()
    }
    if let Some(v) = all(&items, |i| i.as_int()) {
        return Some(AttrValue::ListInt(v));
    }
    if let Some(v) = all(&items, |i| match i {
        AttrValue::Bool(b) => Some(*b),
        _ => None,
    }) {
        return Some(AttrValue::ListBool(v));
    }
    if let Some(v) = all(&items, |i| match i {
        AttrValue::String(s) => Some(s.clone()),
        _ => None,
    }) {
        return Some(AttrValue::ListString(v));
    }
    if let Some(v) = all(&items, |i| match i {
        AttrValue::DataType(d) => Some(*d),
        _ => None,
    }) {
        return Some(AttrValue::ListDataType(v));
    }
    if let Some(v) = all(&items, |i| match i {
        AttrValue::ListInt(l) => Some(l.clone()),
        _ => None,
    }) {
        return Some(AttrValue::ListListInt(v));
    }
    all(&items, |i| match i {
        AttrValue::Float(v) => Some(*v),
        AttrValue::Int(v) => format!("{v}").parse::<f32>().ok(),
        _ => None,
    })
    .map(AttrValue::ListFloat)
}
