package import GroveWire

/// A strict JSON parser that knows where it is. Foundation's decoder reports neither where a
/// syntax error is nor duplicate keys; topology authors need both, and so does anyone typing an
/// event for `fsm-send`.
package struct LocatingJSONParser {
    /// The first syntax error, with where it happened.
    package struct SyntaxError: Error {
        package var path: JSONPath
        package var line: Int
        package var column: Int
        package var message: String
        /// Where, the JSONPath way (`$.add`).
        package var pathDescription: String { path.description }
        /// "column 7", or "line 2, column 7" in a text of several lines.
        package func position(multiline: Bool) -> String { LocatingJSONParser.position(line: line, column: column, multiline: multiline) }
    }

    /// A key given twice in one object; the later value wins.
    package struct DuplicateKey {
        package var path: JSONPath
        package var line: Int
        package var column: Int
        /// Where, the JSONPath way (`$.add`).
        package var pathDescription: String { path.description }
        /// "column 7", or "line 2, column 7" in a text of several lines.
        package func position(multiline: Bool) -> String { LocatingJSONParser.position(line: line, column: column, multiline: multiline) }
    }

    static func position(line: Int, column: Int, multiline: Bool) -> String {
        multiline ? "line \(line), column \(column)" : "column \(column)"
    }

    /// Deeper nesting is refused instead of risking the stack.
    private let maximumDepth: Int

    private let bytes: [UInt8]
    private var offset = 0
    /// What the text is, in messages: "the file", "the event".
    private let document: String
    /// What an empty document is told it should hold.
    private let emptyAdvice: String
    /// Duplicate keys found so far, in document order.
    package private(set) var duplicateKeys: [DuplicateKey] = []

    /// - Parameters:
    ///   - bytes: The JSON text, UTF-8.
    ///   - document: What the text is, as messages name it ("unexpected end of the file").
    ///   - emptyAdvice: What an empty document should have held.
    ///   - maximumDepth: How deep arrays and objects may nest: no topology comes close to the
    ///     default; events are allowed what Foundation's decoder allows, 512.
    package init(_ bytes: [UInt8], document: String = "the file",
                 emptyAdvice: String = "a topology is a JSON object: { \"name\": ... }", maximumDepth: Int = 128) {
        self.bytes = bytes
        self.document = document
        self.emptyAdvice = emptyAdvice
        self.maximumDepth = maximumDepth
    }

    /// Parses the whole input as one JSON value.
    package mutating func parse() throws(SyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        skipWhitespace()
        guard offset < bytes.count else {
            throw failure(.root, "\(document) is empty; \(emptyAdvice)")
        }
        let value = try parseValue(.root, depth: 0)
        skipWhitespace()
        guard offset == bytes.count else {
            throw failure(.root, "unexpected \(describeHere()) after the end of \(document); remove it, or look for an extra closing bracket")
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(_ path: JSONPath, depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < maximumDepth else {
            // At the root: the path down there would be hundreds of steps long.
            throw failure(.root, "nesting deeper than \(maximumDepth) levels; flatten \(document)")
        }
        skipWhitespace()
        guard let byte = peek() else {
            throw failure(path, "unexpected end of \(document); expected a value")
        }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(path, depth: depth)
        case UInt8(ascii: "["): return try parseArray(path, depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString(path))
        case UInt8(ascii: "t"): try parseLiteral("true", path); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false", path); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null", path); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber(path)
        default: throw unexpectedValue(path)
        }
    }

    private mutating func parseObject(_ path: JSONPath, depth: Int) throws(SyntaxError) -> JSONValue {
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        // Where the comma before this member is: a trailing comma is reported there.
        var comma = offset
        while true {
            skipWhitespace()
            switch peek() {
            case nil:
                throw failure(path, "unexpected end of \(document) inside an object; close it with '}'")
            case UInt8(ascii: "}"):
                throw failure(path, "trailing comma before '}'; remove the comma", at: comma)
            case UInt8(ascii: "\""):
                break
            case UInt8(ascii: "'"):
                throw failure(path, "keys need double quotes, not single quotes")
            case UInt8(ascii: "/"), UInt8(ascii: "#"):
                throw failure(path, "JSON has no comments; remove the comment")
            default:
                throw failure(path, "expected a key in double quotes, found \(describeHere())")
            }
            let keyOffset = offset
            let key = try parseString(path)
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw failure(path.appending(key), "expected ':' after the key \(JSONValue.string(key)), found \(describeHere())")
            }
            offset += 1
            let value = try parseValue(path.appending(key), depth: depth + 1)
            if members.updateValue(value, forKey: key) != nil {
                let (line, column) = location(of: keyOffset)
                duplicateKeys.append(DuplicateKey(path: path.appending(key), line: line, column: column))
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                comma = offset
                offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return .object(members)
            case nil:
                throw failure(path, "unexpected end of \(document) inside an object; close it with '}'")
            default:
                throw failure(path, "expected ',' or '}' after the value of \(JSONValue.string(key)), found \(describeHere()); a comma is probably missing")
            }
        }
    }

    private mutating func parseArray(_ path: JSONPath, depth: Int) throws(SyntaxError) -> JSONValue {
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        var comma = offset
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                throw failure(path, "trailing comma before ']'; remove the comma", at: comma)
            }
            elements.append(try parseValue(path.appending(index: elements.count), depth: depth + 1))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                comma = offset
                offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return .array(elements)
            case nil:
                throw failure(path, "unexpected end of \(document) inside an array; close it with ']'")
            default:
                throw failure(path, "expected ',' or ']' after an element, found \(describeHere()); a comma is probably missing")
            }
        }
    }

    private mutating func parseLiteral(_ literal: String, _ path: JSONPath) throws(SyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes[offset...].starts(with: expected) else {
            throw failure(path, "unexpected \(describeHere()); did you mean \(literal)? Strings need double quotes")
        }
        offset += expected.count
    }

    private mutating func parseNumber(_ path: JSONPath) throws(SyntaxError) -> JSONValue {
        let start = offset
        if peek() == UInt8(ascii: "-") { offset += 1 }
        guard let first = peek(), Self.isDigit(first) else {
            throw failure(path, "expected a digit after '-'")
        }
        offset += 1
        if first == UInt8(ascii: "0"), let next = peek(), Self.isDigit(next) {
            throw failure(path, "numbers cannot start with 0; remove the leading zeros")
        }
        skipDigits()
        if peek() == UInt8(ascii: ".") {
            offset += 1
            guard let next = peek(), Self.isDigit(next) else { throw failure(path, "expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            offset += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
            guard let next = peek(), Self.isDigit(next) else { throw failure(path, "expected a digit in the exponent") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else {
            offset = start
            throw failure(path, "the number \(text) is out of range")
        }
        return .number(number)
    }

    // MARK: - Strings

    private mutating func parseString(_ path: JSONPath) throws(SyntaxError) -> String {
        let start = offset
        offset += 1
        var buffer: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                guard let text = String(validating: buffer, as: UTF8.self) else {
                    offset = start
                    throw failure(path, "the string is not valid UTF-8; write \(document) as UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                offset += 1
                try parseEscape(into: &buffer, path)
            case UInt8(ascii: "\n"):
                throw failure(path, "line break inside a string; close the string with '\"' or write \\n")
            case 0..<0x20:
                throw failure(path, "control character inside a string; escape it, e.g. \\t")
            default:
                buffer.append(byte)
                offset += 1
            }
        }
        offset = start
        throw failure(path, "unterminated string; close it with '\"'")
    }

    private mutating func parseEscape(into buffer: inout [UInt8], _ path: JSONPath) throws(SyntaxError) {
        guard let byte = peek() else { throw failure(path, "unterminated string; close it with '\"'") }
        offset += 1
        if let character = JSONEscape.character(for: byte) {
            buffer.append(character)
            return
        }
        switch byte {
        case UInt8(ascii: "u"):
            var value = try parseHex4(path)
            if (0xD800..<0xDC00).contains(value) {
                guard bytes[offset...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                    throw failure(path, "a \\u escape of a high surrogate must be followed by a low surrogate")
                }
                offset += 2
                let low = try parseHex4(path)
                guard (0xDC00..<0xE000).contains(low) else {
                    throw failure(path, "a \\u escape of a high surrogate must be followed by a low surrogate")
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw failure(path, "the \\u escape is a lone surrogate; escape the full character")
            }
            buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            offset -= 1
            throw failure(path, "unknown escape '\\\(Self.describe(byte))'; the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
    }

    private mutating func parseHex4(_ path: JSONPath) throws(SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = Self.hexValue(byte) else {
                throw failure(path, "expected four hex digits after \\u")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    // MARK: - Scanning and reporting

    private func peek() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            offset += 1
        }
    }

    private mutating func skipDigits() {
        while let byte = peek(), Self.isDigit(byte) { offset += 1 }
    }

    private func unexpectedValue(_ path: JSONPath) -> SyntaxError {
        switch peek() {
        case UInt8(ascii: "'"):
            failure(path, "strings need double quotes, not single quotes")
        case UInt8(ascii: "/"), UInt8(ascii: "#"):
            failure(path, "JSON has no comments; remove the comment")
        case let byte? where Self.isLetter(byte):
            failure(path, "unexpected \(describeHere()); strings need double quotes, and true, false and null are lowercase")
        default:
            failure(path, "unexpected \(describeHere()); expected a value: an object, array, string, number, true, false or null")
        }
    }

    private func failure(_ path: JSONPath, _ message: String, at place: Int? = nil) -> SyntaxError {
        let (line, column) = location(of: place ?? offset)
        return SyntaxError(path: path, line: line, column: column, message: message)
    }

    /// Line and column, both from 1; columns count characters as a reader sees them (an accented
    /// letter or an emoji is one, whatever its bytes and scalars), not bytes.
    private func location(of target: Int) -> (line: Int, column: Int) {
        let end = min(target, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0 ..< end where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return (line, String(decoding: bytes[lineStart ..< end], as: UTF8.self).count + 1)
    }

    private func describeHere() -> String {
        guard let byte = peek() else { return "the end of \(document)" }
        if byte < 0x80 { return "'\(Self.describe(byte))'" }
        let character = String(decoding: bytes[offset..<min(offset + 4, bytes.count)], as: UTF8.self).first
        return character.map { "'\($0)'" } ?? "a byte that is not UTF-8"
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\u{\(String(byte, radix: 16))}"
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }
}
