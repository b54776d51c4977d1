extension String {
    /// The bytes as a String, or nil when they are not UTF-8: `String(validating:as:)` without its
    /// cost. That initializer is not specialized for buffers (a generic metadata lookup and
    /// an unspecialized validation per call), which cost more than the rest of a small decode.
    /// Decoding with repair is specialized; repair changes bytes only where they were not UTF-8,
    /// so the input was valid exactly when nothing changed.
    package init?(validatingUTF8Quickly utf8: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: utf8, as: UTF8.self)
        var ascii = true
        for byte in utf8 where byte >= 0x80 {
            ascii = false
            break
        }
        guard ascii || text.utf8.elementsEqual(utf8) else { return nil }
        self = text
    }

    /// ``init(validatingUTF8Quickly:)`` for bytes in an array.
    init?(validatingUTF8Quickly utf8: ArraySlice<UInt8>) {
        guard let text = utf8.withUnsafeBufferPointer({ String(validatingUTF8Quickly: $0) }) else { return nil }
        self = text
    }
}
