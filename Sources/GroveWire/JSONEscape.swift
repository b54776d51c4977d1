/// JSON's one-character string escapes (RFC 8259, section 7), for the parsers that unescape
/// strings (the transcoder's and the topology loader's).
package enum JSONEscape {
    /// The byte that `\` followed by `escape` stands for: `"`, `\`, `/`, or the control
    /// character of `b`, `f`, `n`, `r` or `t`. Nil for `u` (four hex digits follow) and for
    /// anything else, which JSON does not allow.
    @inlinable
    package static func character(for escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }
}
