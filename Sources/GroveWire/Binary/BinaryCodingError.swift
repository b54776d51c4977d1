/// An error from ``BinaryCodec``: what went wrong, what to do about it, and where in the value.
///
/// Equality compares codes only; the message is for people.
///
/// ```swift
/// do {
///     _ = try BinaryCodec.decode(Event.self, from: bytes)
/// } catch {
///     print(error.code, error.path)   // keyNotFound $.updateEmail._0
/// }
/// ```
public struct BinaryCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text, e.g. `truncated`.
        public var rawValue: String

        /// Creates a code from its text.
        /// - Parameter rawValue: The code as text.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code as text.
        public var description: String { rawValue }

        /// The input ended inside a value.
        public static let truncated = Code(rawValue: "truncated")
        /// The input is not the binary format: an unknown tag, an overlong varint, invalid UTF-8.
        public static let malformed = Code(rawValue: "malformed")
        /// Bytes follow the encoded value.
        public static let trailingBytes = Code(rawValue: "trailing-bytes")
        /// The value has a different kind than the type asks for (a string where an Int is needed).
        public static let typeMismatch = Code(rawValue: "type-mismatch")
        /// A keyed container has no value for a key the type requires.
        public static let keyNotFound = Code(rawValue: "key-not-found")
        /// Nil (or the end of an unkeyed container) where the type requires a value.
        public static let valueNotFound = Code(rawValue: "value-not-found")
        /// A number that does not fit the integer or floating-point type asked for.
        public static let numberOutOfRange = Code(rawValue: "number-out-of-range")
        /// Containers nested deeper than ``BinaryCodec/maximumDepth``.
        public static let tooDeep = Code(rawValue: "too-deep")
        /// The type's own `init(from:)` rejected the data (`DecodingError.dataCorrupted`).
        public static let dataCorrupted = Code(rawValue: "data-corrupted")
        /// The type's own `encode(to:)` rejected a value (`EncodingError.invalidValue`).
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// The type used containers in an order a streaming encoder cannot write, e.g. writing
        /// to a container after leaving it for its parent.
        public static let unsupported = Code(rawValue: "unsupported")
        /// The type's own `encode(to:)` or `init(from:)` threw an error of its own.
        public static let failed = Code(rawValue: "failed")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do next.
    public var message: String
    /// Where in the value, as a JSON path: `$`, `$.updateEmail._0`, `$.items[2].name`.
    public var path: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong and what to do next.
    ///   - path: Where in the value, e.g. `$.updateEmail._0`.
    public init(_ code: Code, _ message: String, path: String = "$") {
        self.code = code
        self.message = message
        self.path = path
    }

    /// Compares codes only.
    public static func == (lhs: BinaryCodingError, rhs: BinaryCodingError) -> Bool { lhs.code == rhs.code }

    /// `code at path: message`.
    public var description: String { "\(code) at \(path): \(message)" }
}

extension BinaryCodingError {
    /// Marks an error raised below the containers, which do not know the coding path: the
    /// container that catches it fills the path in.
    static let unlocated = ""

    static func truncated(_ what: String, at offset: Int) -> BinaryCodingError {
        BinaryCodingError(.truncated, "input ends at byte \(offset) inside \(what); the bytes were cut short — check the framing",
                          path: unlocated)
    }

    static func malformed(_ message: String) -> BinaryCodingError {
        BinaryCodingError(.malformed, message + "; these bytes were not written by BinaryCodec", path: unlocated)
    }

    static func mismatch(expected: String, found tag: UInt8, at offset: Int) -> BinaryCodingError {
        if tag == BinaryTag.null {
            return BinaryCodingError(.valueNotFound, "expected \(expected) but found nil; make the property optional or send a value",
                                     path: unlocated)
        }
        if !BinaryTag.isKnown(tag) {
            return .malformed("unknown tag 0x\(String(tag, radix: 16)) at byte \(offset)")
        }
        return BinaryCodingError(.typeMismatch,
                                 "expected \(expected) but found \(BinaryTag.name(tag)); sender and receiver disagree on this type",
                                 path: unlocated)
    }
}
