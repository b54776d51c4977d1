#if DEBUG
import Synchronization

/// In debug builds, the first time a `@BinaryCodable` type is encoded, and the first time one is
/// decoded, a value of it is encoded both through the generated code and through `Codable`, and
/// the bytes compared. The macro sees only the type's declaration: `CodingKeys` or `init(from:)`
/// in an extension, a `RawRepresentable` conformance declared elsewhere or a raw type behind a
/// typealias change the `Codable` bytes without its knowing. Such a type stops the program here,
/// with what to do, instead of talking past its peers. One value is encoded both ways, so what
/// varies between values (a dictionary's order) cannot make the bytes differ.
enum BinaryCodableCheck {
    /// The types checked so far, by direction: one lock and one hash per call in debug builds.
    private static let checked = Mutex<(encoded: Set<ObjectIdentifier>, decoded: Set<ObjectIdentifier>)>(([], []))

    static func encoded<T: BinaryCodable>(_ value: T) {
        guard checked.withLock({ $0.encoded.insert(ObjectIdentifier(T.self)).inserted }) else { return }
        compare(value, when: "encoding")
    }

    static func decoded<T: BinaryCodable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) {
        guard checked.withLock({ $0.decoded.insert(ObjectIdentifier(T.self)).inserted }),
              let value = try? BinaryCodec.decodeThroughCodable(T.self, from: bytes) else { return }
        compare(value, when: "decoding")
    }

    private static func compare<T: BinaryCodable>(_ value: T, when: String) {
        var writer = BinaryCodableWriter(writer: BinaryWriter(bytes: []), refuses: nil)
        var codable: [UInt8] = []
        guard (try? value.encode(binary: &writer)) != nil,
              (try? BinaryCodec.encodeThroughCodable(value, into: &codable)) != nil,
              writer.writer.bytes != codable else { return }
        assertionFailure("@BinaryCodable: \(T.self) (checked when first \(when) one) encodes to \(writer.writer.bytes) through its "
            + "generated code but to \(codable) through its Codable conformance, which is not the synthesized one the macro "
            + "generated from (CodingKeys, init(from:) or encode(to:) in an extension, RawRepresentable declared elsewhere, a raw "
            + "type behind a typealias): remove @BinaryCodable from \(T.self), or from the type of one of its fields that "
            + "has such a coding")
    }
}
#endif
