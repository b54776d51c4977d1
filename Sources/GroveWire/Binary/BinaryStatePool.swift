import Synchronization

/// Keeps one spare encoding and one spare decoding state, with their arrays' capacity, for the
/// next call: a small message otherwise spends a good part of its time allocating and freeing
/// them. A state goes back only when nothing else references it (a type that kept its encoder
/// or decoder keeps the state to itself). The slots hold retained object pointers as integers.
enum BinaryStatePool {
    private static let encoder = Atomic<UInt>(0)
    private static let decoder = Atomic<UInt>(0)

    static func takeEncoder() -> BinaryEncodingState {
        take(encoder, as: BinaryEncodingState.self) ?? .make()
    }

    static func recycle(_ state: inout BinaryEncodingState) {
        guard isKnownUniquelyReferenced(&state) else { return }
        state.core.reset()
        put(state, into: encoder)
    }

    static func takeDecoder(bytes: UnsafeBufferPointer<UInt8>) -> BinaryDecodingState {
        let state = take(decoder, as: BinaryDecodingState.self) ?? .make()
        state.core.reader = BinaryReader(bytes: bytes)
        return state
    }

    static func recycle(_ state: inout BinaryDecodingState) {
        // Whatever happens next, a decoder kept past this call must not read the caller's bytes.
        state.core.reader = .empty
        guard isKnownUniquelyReferenced(&state) else { return }
        state.core.reset()
        put(state, into: decoder)
    }

    private static func take<State: AnyObject>(_ slot: borrowing Atomic<UInt>, as type: State.Type) -> State? {
        let bits = slot.exchange(0, ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<State>.fromOpaque(pointer).takeRetainedValue()
    }

    private static func put<State: AnyObject>(_ state: State, into slot: borrowing Atomic<UInt>) {
        let spare = Unmanaged.passRetained(state)
        let bits = UInt(bitPattern: spare.toOpaque())
        if !slot.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged {
            spare.release()
        }
    }
}
