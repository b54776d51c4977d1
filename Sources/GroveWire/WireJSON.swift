import Foundation

/// The JSON codec for payloads, with errors that name the failing path.
public enum WireJSON {
    /// Encodes `value` as compact JSON with sorted keys (what `JSONEncoder` writes with
    /// `.sortedKeys` and `.withoutEscapingSlashes`). Values without floating-point numbers and the
    /// types `JSONEncoder` encodes its own way (`Date`, `Data`, `URL`, `Decimal`) take a path
    /// several times faster, through ``BinaryCodec``, that writes the same bytes.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        if let binary = try? BinaryCodec.encode(value, refusing: encodesItsOwnWay),
           let json = BinaryJSONWriter.json(from: binary) {
            return json
        }
        return try encodeWithFoundation(value)
    }

    /// The types `JSONEncoder` does not encode through their `Encodable` conformance.
    static func encodesItsOwnWay(_ type: Any.Type) -> Bool {
        type == Date.self || type == Data.self || type == URL.self || type == Decimal.self
    }

    /// `JSONEncoder` itself, for what ``encode(_:)`` does not write on its own.
    static func encodeWithFoundation<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Decodes `bytes` as `T`.
    /// - Throws: ``WireError`` `malformed-json` when the bytes are not JSON, or `code` when they
    ///   are JSON of the wrong shape; ``WireError/path`` names where, e.g. `$.updateEmail._0`.
    public static func decode<T: Decodable>(
        _ type: T.Type, from bytes: [UInt8], code: WireError.Code = .undecodableEvent, what: String = "payload"
    ) throws(WireError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            // Foundation's decoder reports a number that does not fit the type it is decoded as
            // (`9223372036854775808` for an Int, `1.5` for an Int, `300` for an Int8) as
            // "The given data was not valid JSON", with no coding path: it would read as the
            // top level being wrong (for an enum, as an unknown case). Decoded again, through
            // the binary codec, the same bytes say where and what.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               let located = locate(T.self, in: bytes, code: code, what: what) {
                throw located
            }
            throw describe(error, bytes: bytes, code: code, what: what, type: "\(T.self)")
        } catch {
            throw WireError(code, "\(what) could not be decoded as \(T.self): \(error)")
        }
    }

    /// Decodes `bytes` as `T` several times faster than ``decode(_:from:code:what:)`` by
    /// rewriting the JSON as ``BinaryCodec``'s format and decoding that, or returns nil: when
    /// the bytes are not strict JSON or `T` rejects them. Callers then fall back to `decode`,
    /// which says what is wrong. For valid input the result is what `JSONDecoder` gives, except
    /// that types `JSONDecoder` special-cases (`Data`, `URL`, `Decimal`) make it return nil.
    public static func decodeQuickly<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) -> T? {
        guard let binary = JSONTranscoder.transcode(bytes) else { return nil }
        return try? BinaryCodec.decode(T.self, from: binary)
    }

    /// ``decodeQuickly(_:from:)`` for a whole array.
    public static func decodeQuickly<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        decodeQuickly(type, from: bytes[...])
    }

    /// The JSON path of a coding path: `$.machines[2].worker`.
    public static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.reduce("$") { path, key in
            if let index = key.intValue { return "\(path)[\(index)]" }
            return "\(path).\(key.stringValue)"
        }
    }

    /// The JSON path `$.add._0` as people write it: `add._0` (`$` for the whole value).
    static func displayPath(_ path: String) -> String {
        path.hasPrefix("$.") ? String(path.dropFirst(2)) : path
    }

    /// Where and why `bytes` do not decode as `T`, found by decoding them through
    /// ``BinaryCodec`` (``JSONTranscoder``), whose errors carry the coding path; `nil` when they
    /// decode there, are not JSON it takes, or fail for another reason than a value's type.
    static func locate<T: Decodable>(_ type: T.Type, in bytes: [UInt8], code: WireError.Code, what: String) -> WireError? {
        // Only JSON (the transcoder does not check a string's UTF-8): not JSON is said so.
        guard let binary = JSONTranscoder.transcode(bytes[...]),
              (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil else { return nil }
        do {
            _ = try BinaryCodec.decode(T.self, from: binary)
            return nil
        } catch {
            // The binary codec's advice is for its own peers ("use a wider integer type on
            // both sides"); the finding itself is the part before it.
            let finding = error.message.split(separator: ";", maxSplits: 1).first.map(String.init) ?? error.message
            let place = displayPath(error.path)
            switch error.code {
            case .numberOutOfRange:
                return WireError(code, "\(what) has a value that does not fit its type at \(place): \(finding); send a value within the type's range",
                                 path: error.path)
            case .typeMismatch:
                // JSON has one kind of number: a fraction, an exponent or an integer past 64 bits
                // arrives as a Double, which no integer type takes.
                if let integer = integerExpected(finding), finding.hasSuffix("but found a Double") {
                    return WireError(code, "\(what) has a value that does not fit its type at \(place): expected \(integer), "
                                     + "a whole number within its range", path: error.path)
                }
                return WireError(code, "\(what) has a value of the wrong type at \(place): \(finding)", path: error.path)
            case .valueNotFound:
                return WireError(code, "\(what) has no value at \(place): \(finding)", path: error.path)
            case .keyNotFound:
                return WireError(code, "\(what) is missing a value at \(place): \(finding)", path: error.path)
            default:
                return nil
            }
        }
    }

    /// The integer type a binary codec finding "expected Int8 but found …" names, or nil.
    private static func integerExpected(_ finding: String) -> String? {
        guard finding.hasPrefix("expected ") else { return nil }
        let type = finding.dropFirst("expected ".count).prefix { $0 != " " }
        let integers: Set<Substring> = ["Int", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "UInt128"]
        return integers.contains(type) ? String(type) : nil
    }

    static func describe(_ error: DecodingError, bytes: [UInt8], code: WireError.Code, what: String, type: String) -> WireError {
        if (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil {
            let preview = String(decoding: bytes.prefix(60), as: UTF8.self)
            return WireError(.malformedJSON, "\(what) is not valid JSON: '\(preview)'")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return WireError(code, "\(what) is missing key '\(key.stringValue)' needed for \(type)",
                             path: path(context.codingPath + [key]))
        case .typeMismatch(let expected, let context):
            return WireError(code, "\(what) has the wrong type at \(displayPath(path(context.codingPath))): expected \(expected) for \(type). \(context.debugDescription)",
                             path: path(context.codingPath))
        case .valueNotFound(let expected, let context):
            return WireError(code, "\(what) has null where \(expected) is needed for \(type)", path: path(context.codingPath))
        case .dataCorrupted(let context):
            return WireError(code, "\(what) does not decode as \(type): \(context.debugDescription)", path: path(context.codingPath))
        @unknown default:
            return WireError(code, "\(what) does not decode as \(type): \(error)")
        }
    }
}
