import GroveCluster
@_spi(GroveInternal) import GroveWire

/// The direct requests a worker delivered and has not answered yet, by id (``DirectRequestID``):
/// a ring indexed by the id's sequence, so that finding one when its reply comes is an index and
/// a compare, not a hash (the worker looks each request up twice). Pure.
///
/// Each request takes the slot of its sequence; ``nextID(sender:)`` skips a sequence whose slot
/// is still taken (a request left unanswered longer than the ring turns), so every pending id has
/// a slot of its own. The ring doubles when it is half full, up to one slot per sequence
/// (2^24), where two pending ids can no longer meet in a slot; ``RequestBound`` keeps the count
/// far below that (`queues.workerOutbox`).
struct DirectPending {
    /// A request delivered and not answered yet: whom to answer, under which correlation.
    struct Request: Equatable {
        let peer: [UInt8]
        let correlation: UInt64
        let address: String
        let bytes: Int
    }

    private struct Slot {
        /// 0 for a free slot: no direct id is 0 (its epoch bits are not).
        var id: UInt64 = 0
        var request: Request?
    }

    private var slots: [Slot]
    private var mask: UInt64
    /// Requests held.
    private(set) var count = 0
    /// Their bytes (address and payload).
    private(set) var bytes = 0
    /// The sequence the next id takes, or the first free one after it.
    private var sequence: UInt64 = 1

    /// The largest ring: one slot per sequence.
    private static let largest = Int(DirectRequestID.sequenceMask) + 1

    /// - Parameters:
    ///   - capacity: Slots to start with, a power of two.
    ///   - sequence: The first id's sequence (tests start near the wrap).
    init(capacity: Int = 1024, sequence: UInt64 = 1) {
        self.sequence = sequence & DirectRequestID.sequenceMask
        precondition(capacity > 0 && capacity & (capacity - 1) == 0 && capacity <= Self.largest, "a power of two up to 2^24")
        slots = Array(repeating: Slot(), count: capacity)
        mask = UInt64(capacity - 1)
    }

    /// The slots the ring has now (for tests).
    var capacity: Int { slots.count }

    var isEmpty: Bool { count == 0 }

    /// The request pending under `id`, if one is.
    subscript(id: UInt64) -> Request? {
        let slot = slots[Int(id & mask)]
        return slot.id == id ? slot.request : nil
    }

    /// Holds `request` under a new id for sender `number` and returns the id.
    mutating func insert(_ request: Request, sender number: UInt32) -> UInt64 {
        if count * 2 >= slots.count && slots.count < Self.largest { grow() }
        // A slot still taken (a request older than a turn of the ring) is skipped: the ring is
        // at most half full, so a free one comes soon.
        while slots[Int(sequence & mask)].request != nil {
            sequence = (sequence + 1) & DirectRequestID.sequenceMask
        }
        let id = DirectRequestID.make(sender: number, sequence: sequence)
        slots[Int(sequence & mask)] = Slot(id: id, request: request)
        sequence = (sequence + 1) & DirectRequestID.sequenceMask
        count += 1
        bytes += request.bytes
        return id
    }

    /// Takes the request pending under `id` out; `nil` when none is (answered already, or not a
    /// direct id of this worker).
    mutating func remove(_ id: UInt64) -> Request? {
        let index = Int(id & mask)
        guard slots[index].id == id, let request = slots[index].request else { return nil }
        slots[index] = Slot()
        count -= 1
        bytes -= request.bytes
        return request
    }

    /// Twice the slots; each request moves to the slot of its sequence in the larger ring (which
    /// is free: sequences in different slots of the smaller ring differ in their low bits).
    private mutating func grow() {
        let larger = slots.count * 2
        var moved = Array(repeating: Slot(), count: larger)
        let largerMask = UInt64(larger - 1)
        for slot in slots where slot.request != nil {
            moved[Int(slot.id & largerMask)] = slot
        }
        slots = moved
        mask = largerMask
    }
}
