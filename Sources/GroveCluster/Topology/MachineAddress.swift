import Foundation

/// An address as clients, workers and routes write it: a machine's name alone (`auth`), or a
/// keyed machine's name and one instance's key (`counter/42`). The key is everything after the
/// first `/` byte, slashes included (bytes, not characters: a `/` followed by a combining mark
/// still ends the machine's name, as grants and placement, which compare bytes, see it). The one
/// reading of an address: every place that needs the machine or the key of one asks here, so
/// they all agree on the odd ones (`/x` names the machine "", `a/` the key "").
package struct MachineAddress: Equatable, Sendable {
    /// The machine's name: the address up to its first `/`, or all of it.
    package let machine: String
    /// The instance's key: what follows the first `/` (maybe empty); nil when there is no `/`.
    package let key: String?

    @inlinable
    package init(_ address: String) {
        if let slash = address.utf8.firstIndex(of: UInt8(ascii: "/")) {
            machine = String(address[..<slash])
            key = String(address[address.utf8.index(after: slash)...])
        } else {
            machine = address
            key = nil
        }
    }

    /// Whether it names an instance of a keyed machine: a machine and a key, neither empty.
    @inlinable
    package var isInstance: Bool { !machine.isEmpty && key?.isEmpty == false }

    /// The machine `address` names (``machine``), without reading the key.
    @inlinable
    package static func machine(of address: String) -> String {
        guard let slash = address.utf8.firstIndex(of: UInt8(ascii: "/")) else { return address }
        return String(address[..<slash])
    }

    /// Whether `address` has a key part (a `/` byte): what a keyed machine's instances are
    /// addressed by. A `/` followed by a combining mark counts, as it does for ``init(_:)``
    /// (`String.contains("/")` compares characters, and would not see it).
    @inlinable
    package static func hasKey(_ address: String) -> Bool {
        address.utf8.contains(UInt8(ascii: "/"))
    }

    /// Whether `address` is in Unicode Normalization Form C. Swift compares strings by canonical
    /// equivalence (`"e\u{301}" == "é"`) while grants, placement and stores compare bytes: with
    /// every address in NFC, equal strings are equal bytes, so they all agree. ASCII is NFC, and
    /// costs one pass over the bytes. Here, in the shared model, because the topology's decoder
    /// holds its names to it as the coordinator holds every request's address (per message:
    /// `@inlinable`, so the coordinator's module inlines it as it did when it was its own).
    @inlinable
    package static func isNFC(_ address: String) -> Bool {
        if address.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return address.precomposedStringWithCanonicalMapping.utf8.elementsEqual(address.utf8)
    }
}
