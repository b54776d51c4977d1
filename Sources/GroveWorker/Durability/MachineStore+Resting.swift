import GroveCluster

// What recovery at start leaves in the store (issue 37): a keyed instance of a passivating
// machine whose record holds only its state has nothing to run until a message reaches it, and
// comes back then as a passivated one does. The stores find the others by an index on the
// record's first byte (``DurableRecord``'s codec), so a restart reads only what must run.

extension MachineRecord {
    /// Whether the instance held nothing but its state when written: no timer, io, queued or
    /// postponed event. ``DurableRecord`` writes such a snapshot under its state-alone codec
    /// byte, which the stores index; a state the binary codec refuses goes whole in JSON and
    /// counts as holding more (it comes back at start, as before).
    package var holdsOnlyState: Bool { snapshot.first == DurableRecord.stateAloneCodec }

    /// Whether it may stay in the store at start: it holds only its state and is a keyed
    /// instance of one of `resting`.
    package func mayRest(_ resting: Set<String>) -> Bool {
        holdsOnlyState && MachineAddress.hasKey(address) && resting.contains(MachineAddress.machine(of: address))
    }
}

/// One keyed instance the store holds: what ``MachineStore/keyedInstances(of:)`` lists.
package struct StoredInstance: Sendable, Hashable {
    package var address: String
    /// The machine's type name when it was written (`machines[].type`).
    package var type: String

    package init(address: String, type: String) {
        self.address = address
        self.type = type
    }
}

/// The addresses of one machine's keyed instances as a range of byte strings: every address
/// that starts with `machine/`, which is every address from `machine/` up to, not including,
/// `machine0` (`0` is the byte after `/`). A machine name holds no `/`, so the ranges of two
/// machines never overlap. How SQLite reads them through its index on addresses.
package struct KeyedRange: Sendable, Hashable {
    package var from: String
    package var to: String

    package init(_ machine: String) {
        from = machine + "/"
        to = machine + "0"
    }

    package func contains(_ address: String) -> Bool {
        !address.utf8.lexicographicallyPrecedes(from.utf8) && address.utf8.lexicographicallyPrecedes(to.utf8)
    }

    /// The gaps between the ranges of `machines`, in byte order: every address outside them all
    /// is in exactly one gap. A nil bound is open.
    package static func gaps(around machines: Set<String>) -> [(from: String?, to: String?)] {
        let ranges = machines.map(KeyedRange.init).sorted { $0.from.utf8.lexicographicallyPrecedes($1.from.utf8) }
        var gaps: [(from: String?, to: String?)] = []
        var lower: String? = nil
        for range in ranges {
            gaps.append((lower, range.from))
            lower = range.to
        }
        gaps.append((lower, nil))
        return gaps
    }
}
