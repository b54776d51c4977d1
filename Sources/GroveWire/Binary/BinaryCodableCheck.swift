#if DEBUG
import Synchronization

/// In debug builds, the first value of each `@BinaryCodable` type that is encoded, and the first
/// that is decoded, is also coded through `Codable` and compared. The macro sees only the type's
/// declaration: `CodingKeys` or `init(from:)` in an extension, a `RawRepresentable` conformance
/// declared elsewhere or a raw type behind a typealias change the `Codable` bytes without its
/// knowing. Such a type stops the program here, with what to do, instead of talking past its peers.
enum BinaryCodableCheck {
    private static let checked = Mutex<Set<String>>([])

    static func encoded<T: BinaryCodable>(_ value: T, as bytes: ArraySlice<UInt8>) {
        guard firstTime("encode", T.self) else { return }
        var codable: [UInt8] = []
        guard (try? BinaryCodec.encodeThroughCodable(value, into: &codable)) != nil else { return }
        if codable != Array(bytes) { mismatch(T.self, "encodes \(Array(bytes)), its Codable conformance \(codable)") }
    }

    static func decoded<T: BinaryCodable>(_ value: T, from bytes: UnsafeBufferPointer<UInt8>) {
        guard firstTime("decode", T.self),
              let codable = try? BinaryCodec.decodeThroughCodable(T.self, from: bytes) else { return }
        var mine: [UInt8] = []
        var theirs: [UInt8] = []
        guard (try? BinaryCodec.encodeThroughCodable(value, into: &mine)) != nil,
              (try? BinaryCodec.encodeThroughCodable(codable, into: &theirs)) != nil else { return }
        if mine != theirs { mismatch(T.self, "decodes \(Array(bytes)) to another value than its Codable conformance does") }
    }

    private static func firstTime(_ direction: String, _ type: Any.Type) -> Bool {
        checked.withLock { $0.insert(direction + " " + String(reflecting: type)).inserted }
    }

    private static func mismatch(_ type: Any.Type, _ what: String) {
        assertionFailure("@BinaryCodable: \(type) \(what). Its Codable coding is not the synthesized one the macro generated "
            + "(CodingKeys, init(from:) or encode(to:) in an extension, RawRepresentable declared elsewhere, a raw type behind a "
            + "typealias): remove @BinaryCodable from \(type)")
    }
}
#endif
