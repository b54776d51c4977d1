import Foundation

/// The order `list` pages addresses in: by their UTF-8 bytes, as clients and stores compare
/// them (`String`'s `<` compares Unicode scalars after normalization, which is not the same).
enum AddressOrder {
    /// Whether `a`'s bytes come before `b`'s: compared with `memcmp`, the shorter first when one
    /// begins the other. A generic walk of the two UTF-8 views cost most of a `list` over a
    /// million instances.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                let common = min(a.count, b.count)
                if common > 0, let left = a.baseAddress, let right = b.baseAddress {
                    let order = memcmp(left, right, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }
}
