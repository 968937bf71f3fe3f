package manifest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastYAMLToJSON converts the block-style YAML that Kubernetes manifests
// are written in to JSON, about ten times faster than sigs.k8s.io/yaml,
// giving the same values: scalars resolve exactly as go.yaml.in/yaml/v2
// (which sigs.k8s.io/yaml uses) resolves them — YAML 1.1 booleans (yes, on),
// octal and hexadecimal integers, floats re-encoded as encoding/json does.
//
// It handles block mappings and sequences (indentless ones too), single-line
// plain and quoted scalars, single-line flow collections, literal block
// scalars and simple folded ones, and comments. On anything else — anchors,
// aliases, tags, multi-line plain or quoted scalars, complex keys,
// non-string keys, duplicate keys, timestamps, tabs, CRLF, invalid UTF-8,
// or any syntax error — it returns ok=false, and the caller uses
// sigs.k8s.io/yaml, which then also words the error. A differential test
// holds the two to the same result.
func fastYAMLToJSON(doc []byte) (out []byte, ok bool) {
	var p fastParser
	return p.convert(doc)
}

// convert is fastYAMLToJSON with the parser's buffers: out is valid until
// the parser's next use.
func (p *fastParser) convert(doc []byte) (out []byte, ok bool) { return p.convertKeys(doc, false) }

// convertKeys is convert; with keepDuplicates, a duplicate key does not
// stop it: the first is noted and every occurrence is written, so the JSON
// has the duplicates in document order (which Converter resolves, last
// wins).
func (p *fastParser) convertKeys(doc []byte, keepDuplicates bool) (out []byte, ok bool) {
	if !printable(doc) {
		return nil, false
	}
	*p = fastParser{out: grow(p.out[:0], len(doc)+len(doc)/4), lines: p.lines[:0], keepDuplicates: keepDuplicates}
	p.unterminated = len(doc) > 0 && doc[len(doc)-1] != '\n'
	for len(doc) > 0 {
		i := bytes.IndexByte(doc, '\n')
		var l []byte
		if i < 0 {
			l, doc = doc, nil
		} else {
			l, doc = doc[:i], doc[i+1:]
		}
		ind := 0
		for ind < len(l) && l[ind] == ' ' {
			ind++
		}
		if ind == 0 && len(l) >= 3 && (string(l[:3]) == "---" || string(l[:3]) == "...") && (len(l) == 3 || l[3] == ' ') {
			return nil, false // a document marker
		}
		p.lines = append(p.lines, fastLine{indent: ind, text: l[ind:], raw: l})
	}
	defer fallBack(&ok) // out stays nil: it is set only by the last return
	i, found := p.nextContent()
	if !found {
		return nil, false // empty: the slow path says so
	}
	p.i = i
	line := p.lines[i]
	if isSeqItem(line.text) || !p.looksLikeKey(line.text) {
		return nil, false // manifests are mappings
	}
	p.mapping(line.indent)
	if _, more := p.nextContent(); more {
		p.fail()
	}
	return p.out, true
}

// grow returns b with room for n more bytes.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		return slices.Grow(b, n)
	}
	return b
}

// printable reports whether doc has only characters YAML allows, and no
// tab or carriage return (which the fast path leaves to the slow one).
func printable(doc []byte) bool {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n') || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError || r <= 0x9F || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

// maxKey is below YAML's limit of 1024 characters for an implicit key.
const maxKey = 1000

type fastLine struct {
	indent int
	text   []byte // after the indentation
	raw    []byte
}

type fastParser struct {
	lines []fastLine
	i     int
	out   []byte
	// unterminated: the document's last line has no line break, so a block
	// scalar ending on it has no final line break to keep.
	unterminated bool
	// duplicate is the first duplicate key, when that is what stopped the
	// fast path (or, with keepDuplicates, the first one written).
	duplicate      DuplicateKey
	keepDuplicates bool
}

// failDuplicate stops the fast path at the duplicate key k on line i
// (0-based).
func (p *fastParser) failDuplicate(k []byte, i int) {
	if p.duplicate.Line == 0 {
		p.duplicate = DuplicateKey{Key: string(k), Line: i + 1}
	}
	if !p.keepDuplicates {
		p.fail()
	}
}

type fallbackError struct{}

var errFallback = &fallbackError{}

func (p *fastParser) fail() { panic(errFallback) }

// fallBack, deferred by a fast path (YAML→JSON, the JSON head and List
// scanners), turns the errFallback panic of something the path does not
// handle into *ok = false, so that the caller takes the general decoder;
// any other panic goes on.
func fallBack(ok *bool) {
	if r := recover(); r != nil {
		if r != errFallback {
			panic(r)
		}
		*ok = false
	}
}

// nextContent finds the next line, from p.i, that is not blank or a comment.
func (p *fastParser) nextContent() (int, bool) {
	for i := p.i; i < len(p.lines); i++ {
		if t := p.lines[i].text; len(t) > 0 && t[0] != '#' {
			return i, true
		}
	}
	return len(p.lines), false
}

// nextIndented is the next content line if it is indented at least
// indent: the next entry of the block a mapping or sequence at indent is
// reading, found false when that block has ended.
func (p *fastParser) nextIndented(indent int) (int, fastLine, bool) {
	i, found := p.nextContent()
	if !found || p.lines[i].indent < indent {
		return i, fastLine{}, false
	}
	return i, p.lines[i], true
}

func isSeqItem(t []byte) bool { return len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ') }

// splitKey splits "key: rest" into the key's value and rest; ok is false
// when the text is not a mapping entry. A plain key shares t's memory.
func (p *fastParser) splitKey(t []byte) (key []byte, rest []byte, ok bool) {
	switch t[0] {
	case '"', '\'':
		s, n, good := quoted(t)
		if !good {
			return nil, nil, false
		}
		r := t[n:]
		j := 0
		for j < len(r) && r[j] == ' ' {
			j++
		}
		if j < len(r) && r[j] == ':' && (j+1 == len(r) || r[j+1] == ' ') && n+j < maxKey {
			return []byte(s), r[j+1:], true
		}
		return nil, nil, false
	case '[', '{', '?', '&', '*', '!', '|', '>', '%', '@', '`', '#', ',', ']', '}', ':':
		return nil, nil, false
	}
	for j := 0; j < len(t) && j < maxKey; j++ {
		i := bytes.IndexByte(t[j:], ':')
		if i < 0 {
			break
		}
		j += i
		if j+1 == len(t) || t[j+1] == ' ' {
			if h := bytes.Index(t[:j], []byte(" #")); h >= 0 || j >= maxKey {
				return nil, nil, false // a comment before the colon
			}
			k := bytes.TrimRight(t[:j], " ")
			if len(k) == 0 {
				return nil, nil, false
			}
			return k, t[j+1:], true
		}
	}
	return nil, nil, false
}

func (p *fastParser) looksLikeKey(t []byte) bool {
	_, _, ok := p.splitKey(t)
	return ok
}

// mapping parses a block mapping whose keys are at indent.
func (p *fastParser) mapping(indent int) {
	p.out = append(p.out, '{')
	var keyBuf [16][]byte // keys seen, on the stack until there are many
	keys := keyBuf[:0]
	var keySet map[string]bool
	first := true
	for {
		i, line, found := p.nextIndented(indent)
		if !found {
			break
		}
		if line.indent > indent || isSeqItem(line.text) {
			if line.indent == indent {
				break // an indentless sequence ends the mapping only as a value; the caller decides
			}
			p.fail()
		}
		k, rest, ok := p.splitKey(line.text)
		if !ok {
			p.fail()
		}
		if line.text[0] != '"' && line.text[0] != '\'' && mayResolve(k[0]) {
			if kind, _ := resolvePlain(string(k)); kind != kindString || string(k) == "<<" {
				p.fail() // non-string key (yes, 1, null...) or merge key
			}
		}
		// Duplicate keys are an error for the strict slow path; the first
		// is noted, so that the caller need not ask the slow path which.
		if keySet != nil {
			if keySet[string(k)] {
				p.failDuplicate(k, i)
			}
			keySet[string(k)] = true
		} else {
			for _, seen := range keys {
				if bytes.Equal(seen, k) {
					p.failDuplicate(k, i)
				}
			}
			keys = append(keys, k)
			if len(keys) > 16 {
				keySet = make(map[string]bool, 32)
				for _, s := range keys {
					keySet[string(s)] = true
				}
			}
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = appendJSONString(p.out, k)
		p.out = append(p.out, ':')
		p.i = i + 1
		p.value(rest, indent, true)
	}
	p.out = append(p.out, '}')
}

// sequence parses a block sequence whose dashes are at indent.
func (p *fastParser) sequence(indent int) {
	p.out = append(p.out, '[')
	first := true
	for {
		i, line, found := p.nextIndented(indent)
		if !found {
			break
		}
		if line.indent > indent {
			p.fail()
		}
		if !isSeqItem(line.text) {
			break // the parent mapping's next key (indentless sequence)
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		rest := line.text[1:]
		j := 0
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		item := rest[j:]
		switch {
		case len(item) == 0 || item[0] == '#':
			p.i = i + 1
			p.value(nil, indent, false)
		case isSeqItem(item):
			p.fail() // "- - x"
		case p.looksLikeKey(item):
			// A compact mapping: "- key: value", its keys at the column of "key".
			col := indent + 1 + j
			p.lines[i] = fastLine{indent: col, text: item, raw: line.raw}
			p.i = i
			p.mapping(col)
		default:
			p.i = i + 1
			p.value(item, indent, false)
		}
	}
	p.out = append(p.out, ']')
}

// value parses the value after "key:" or "- " (rest, possibly empty) whose
// parent is at indent; p.i is the line after.
func (p *fastParser) value(rest []byte, indent int, inMapping bool) {
	rest = bytes.TrimLeft(rest, " ")
	if len(rest) > 0 && rest[0] == '#' {
		rest = nil
	}
	if len(rest) == 0 {
		i, found := p.nextContent()
		if !found {
			p.out = append(p.out, "null"...)
			return
		}
		line := p.lines[i]
		switch {
		case line.indent > indent:
			p.i = i
			if isSeqItem(line.text) {
				p.sequence(line.indent)
			} else if p.looksLikeKey(line.text) {
				p.mapping(line.indent)
			} else {
				p.fail() // a scalar on its own line
			}
		case line.indent == indent && inMapping && isSeqItem(line.text):
			p.i = i
			p.sequence(indent)
		default:
			p.out = append(p.out, "null"...)
		}
		return
	}
	switch rest[0] {
	case '"', '\'':
		s, n, ok := quoted(rest)
		if !ok {
			p.fail()
		}
		p.out = appendJSONString(p.out, s)
		p.endOfLine(rest[n:])
	case '[', '{':
		n := p.flow(rest, 0)
		p.endOfLine(rest[n:])
	case '|', '>':
		p.blockScalar(rest, indent)
		return
	case '&', '*', '!', '%', '@', '`', '?', ',', ']', '}', ':':
		p.fail()
	default:
		if isSeqItem(rest) {
			p.fail()
		}
		s := plainInline(rest)
		if bytes.Contains(s, []byte(": ")) || s[len(s)-1] == ':' {
			p.fail()
		}
		p.appendPlainBytes(s)
	}
	// A more indented line after a scalar would continue it: not handled.
	if i, found := p.nextContent(); found && p.lines[i].indent > indent {
		p.fail()
	}
}

// endOfLine accepts only blanks and a comment after a value.
func (p *fastParser) endOfLine(r []byte) {
	r = bytes.TrimLeft(r, " ")
	if len(r) > 0 && r[0] != '#' {
		p.fail()
	}
}

// plainInline cuts a plain scalar at a comment and trims it.
func plainInline(s []byte) []byte {
	for j := 1; j < len(s); j++ {
		if s[j] == '#' && s[j-1] == ' ' {
			s = s[:j]
			break
		}
	}
	return bytes.TrimRight(s, " ")
}

// blockScalar parses "|", "|-", "|+", ">", ">-", ">+" and the lines below,
// indented more than indent.
func (p *fastParser) blockScalar(header []byte, indent int) {
	h := header
	literal := h[0] == '|'
	chomp := byte(0)
	h = h[1:]
	if len(h) > 0 && (h[0] == '-' || h[0] == '+') {
		chomp, h = h[0], h[1:]
	}
	if len(h) > 0 && h[0] != ' ' {
		p.fail() // indentation indicators and the like
	}
	p.endOfLine(h)
	var lines []string
	content, last := -1, -1
	i := p.i
	for ; i < len(p.lines); i++ {
		l := p.lines[i]
		if len(l.text) == 0 { // blank
			if content >= 0 && len(l.raw) > content {
				p.fail() // spaces beyond the indentation are content: not handled
			}
			if content < 0 {
				p.fail() // leading blank lines: not handled
			}
			lines = append(lines, "")
			continue
		}
		if content < 0 {
			if l.indent <= indent {
				break
			}
			content = l.indent
		}
		if l.indent < content {
			if l.indent > indent {
				p.fail()
			}
			break
		}
		lines = append(lines, string(l.raw[content:]))
		last = i
	}
	p.i = i
	finalBreak := !(p.unterminated && last == len(p.lines)-1)
	// Trailing blank lines.
	n := len(lines)
	for n > 0 && lines[n-1] == "" {
		n--
	}
	trailing := len(lines) - n
	body := lines[:n]
	var s string
	if literal {
		s = strings.Join(body, "\n")
	} else {
		for _, l := range body {
			if l == "" || l[0] == ' ' {
				p.fail() // folding rules for blank and more-indented lines: not handled
			}
		}
		s = strings.Join(body, " ")
	}
	switch {
	case n == 0:
		if chomp == '+' {
			s = strings.Repeat("\n", trailing)
		} else {
			s = ""
		}
	case chomp == '-' || !finalBreak:
	case chomp == '+':
		s += strings.Repeat("\n", trailing+1)
	default:
		s += "\n"
	}
	p.out = appendJSONString(p.out, s)
}

// flow parses a flow collection starting at s[pos] on one line and returns
// the position after it.
func (p *fastParser) flow(s []byte, pos int) int {
	skip := func() {
		for pos < len(s) && s[pos] == ' ' {
			pos++
		}
	}
	open := s[pos]
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	p.out = append(p.out, open)
	pos++
	skip()
	if pos < len(s) && s[pos] == closer {
		p.out = append(p.out, closer)
		return pos + 1
	}
	var keys []string
	for first := true; ; first = false {
		skip()
		if pos >= len(s) {
			p.fail() // not closed on this line
		}
		if s[pos] == closer && !first {
			break // trailing comma
		}
		if !first {
			p.out = append(p.out, ',')
		}
		if open == '{' {
			var k string
			switch s[pos] {
			case '"', '\'':
				str, n, ok := quoted(s[pos:])
				if !ok {
					p.fail()
				}
				k, pos = str, pos+n
			default:
				start := pos
				for pos < len(s) && !(s[pos] == ':' && (pos+1 == len(s) || s[pos+1] == ' ')) && !strings.ContainsRune(",[]{}#", rune(s[pos])) {
					pos++
				}
				k = strings.TrimRight(string(s[start:pos]), " ")
				if k == "" || len(k) >= maxKey || strings.ContainsAny(k[:1], "&*!|>%@`?-:\"'") {
					p.fail()
				}
				if kind, _ := resolvePlain(k); kind != kindString {
					p.fail()
				}
			}
			skip()
			if pos >= len(s) || s[pos] != ':' || (pos+1 < len(s) && s[pos+1] != ' ') {
				p.fail()
			}
			pos++
			for _, seen := range keys {
				if seen == k {
					p.fail()
				}
			}
			keys = append(keys, k)
			p.out = appendJSONString(p.out, k)
			p.out = append(p.out, ':')
			skip()
		}
		pos = p.flowNode(s, pos)
		skip()
		if pos >= len(s) {
			p.fail()
		}
		if s[pos] == ',' {
			pos++
			continue
		}
		if s[pos] == closer {
			break
		}
		p.fail()
	}
	p.out = append(p.out, closer)
	return pos + 1
}

func (p *fastParser) flowNode(s []byte, pos int) int {
	if pos >= len(s) {
		p.fail()
	}
	switch s[pos] {
	case '[', '{':
		return p.flow(s, pos)
	case '"', '\'':
		str, n, ok := quoted(s[pos:])
		if !ok {
			p.fail()
		}
		p.out = appendJSONString(p.out, str)
		return pos + n
	case ',', ']', '}', '&', '*', '!', '|', '>', '%', '@', '`', '?', '#', ':':
		p.fail()
	}
	start := pos
	for pos < len(s) && !strings.ContainsRune(",[]{}", rune(s[pos])) {
		if s[pos] == ':' && (pos+1 == len(s) || s[pos+1] == ' ' || s[pos+1] == ',') {
			p.fail() // a single-pair mapping inside a sequence
		}
		if s[pos] == '#' && s[pos-1] == ' ' {
			p.fail()
		}
		pos++
	}
	v := strings.TrimRight(string(s[start:pos]), " ")
	if v == "" || (v[0] == '-' && (len(v) == 1 || v[1] == ' ')) {
		p.fail()
	}
	p.appendPlain(v)
	return pos
}

// quoted reads a single-line double- or single-quoted scalar at the start
// of t; n is the number of bytes it takes.
func quoted(t []byte) (s string, n int, ok bool) {
	q := t[0]
	var b strings.Builder
	for j := 1; j < len(t); j++ {
		c := t[j]
		switch {
		case c == q && q == '\'':
			if j+1 < len(t) && t[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			return b.String(), j + 1, true
		case c == q:
			return b.String(), j + 1, true
		case c == '\\' && q == '"':
			if j+1 >= len(t) {
				return "", 0, false
			}
			j++
			switch t[j] {
			case '"', '\\', '/':
				b.WriteByte(t[j])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case ' ':
				b.WriteByte(' ')
			case 'u':
				if j+4 >= len(t) {
					return "", 0, false
				}
				r, err := strconv.ParseUint(string(t[j+1:j+5]), 16, 32)
				if err != nil || (r >= 0xD800 && r <= 0xDFFF) {
					return "", 0, false
				}
				b.WriteRune(rune(r))
				j += 4
			default:
				return "", 0, false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false // not closed on this line
}

type scalarKind int

const (
	kindString scalarKind = iota
	kindNull
	kindBool
	kindNumber
)

var (
	yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	plainBools     = map[string]bool{
		"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "true": true, "True": true, "TRUE": true, "on": true, "On": true, "ON": true,
		"n": false, "N": false, "no": false, "No": false, "NO": false, "false": false, "False": false, "FALSE": false, "off": false, "Off": false, "OFF": false,
	}
	plainNulls = map[string]bool{"": true, "~": true, "null": true, "Null": true, "NULL": true}
)

// resolvePlain resolves a plain scalar as go.yaml.in/yaml/v2's resolve
// does, returning its kind and, for a number or bool, its JSON. Values it
// would not resolve the same way (infinities, NaN, timestamps, the merge
// key) make the parser fall back.
func resolvePlain(s string) (scalarKind, string) {
	if s == "" {
		return kindNull, "null"
	}
	switch c := s[0]; {
	case c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' || c == 'O' || c == '~':
		if v, ok := plainBools[s]; ok {
			if v {
				return kindBool, "true"
			}
			return kindBool, "false"
		}
		if plainNulls[s] {
			return kindNull, "null"
		}
	case c == '.':
		if strings.EqualFold(s, ".nan") || strings.EqualFold(s, ".inf") {
			panic(errFallback)
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return kindNumber, jsonFloat(f)
		}
	case c == '+' || c == '-' || ('0' <= c && c <= '9'):
		if strings.HasSuffix(strings.ToLower(s), ".inf") {
			panic(errFallback)
		}
		if len(s) > 4 && s[4] == '-' && isDigits(s[:4]) {
			panic(errFallback) // maybe a timestamp
		}
		plain := strings.ReplaceAll(s, "_", "")
		if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return kindNumber, strconv.FormatInt(v, 10)
		}
		if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return kindNumber, strconv.FormatUint(v, 10)
		}
		if yamlStyleFloat.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return kindNumber, jsonFloat(f)
			}
		}
		if strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			panic(errFallback)
		}
	}
	return kindString, ""
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func jsonFloat(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		panic(errFallback)
	}
	return string(b)
}

// mayResolve reports whether a plain scalar starting with c can resolve to
// something other than a string (null, bool, number).
func mayResolve(c byte) bool {
	switch c {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~', '.', '+', '-', '<':
		return true
	}
	return '0' <= c && c <= '9'
}

func (p *fastParser) appendPlainBytes(b []byte) {
	if len(b) > 0 && !mayResolve(b[0]) {
		p.out = appendJSONString(p.out, b)
		return
	}
	p.appendPlain(string(b))
}

func (p *fastParser) appendPlain(s string) {
	kind, js := resolvePlain(s)
	if kind == kindString {
		p.out = appendJSONString(p.out, s)
		return
	}
	p.out = append(p.out, js...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string.
func appendJSONString[T string | []byte](out []byte, s T) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		case '\r':
			out = append(out, '\\', 'r')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
