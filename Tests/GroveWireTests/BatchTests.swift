@_spi(GroveInternal) import GroveWire
import Testing

@Suite("Batch", .timeLimit(.minutes(2)))
struct BatchTests {
    static func message(_ index: Int) -> WireMessage {
        WireMessage(Header(index.isMultiple(of: 2) ? .event : .get, flags: index.isMultiple(of: 3) ? .noWait : [],
                           correlation: UInt64(index) * 0x0101_0101_0101),
                    address: index.isMultiple(of: 5) ? "" : "counter/ключ-\(index)",
                    payload: Array(repeating: UInt8(truncatingIfNeeded: index), count: index % 300))
    }

    @Test func packedMessagesUnpackInOrder() throws {
        let messages = (0..<200).map(Self.message)
        let batch = Batch.pack(messages)
        #expect(batch.header.kind == .batch)
        #expect(batch.header.correlation == 200)
        #expect(batch.address == "")
        #expect(try Batch.unpack(batch.payload) == messages)
        // Frames packed without parsing give the same bytes.
        let fromFrames = Batch.pack(frames: messages.map(\.frames))
        #expect(fromFrames == batch.frames)
    }

    @Test func aSingleMessageIsNotWrapped() {
        let one = Self.message(7)
        #expect(Batch.pack([one]) == one)
        #expect(Batch.pack(frames: [one.frames]) == one.frames)
    }

    @Test func everyTruncationIsAnErrorNotACrash() throws {
        let messages = (1...3).map(Self.message)
        let payload = Batch.pack(messages).payload
        // Where each envelope ends: the payload of the first k messages packed alone.
        var boundaries: [Int: Int] = [0: 0]
        for count in 1 ..< messages.count {
            var partial: [UInt8] = []
            for message in messages.prefix(count) { Batch.append(message, to: &partial) }
            #expect(Array(payload.prefix(partial.count)) == partial)
            boundaries[partial.count] = count
        }
        #expect(boundaries.count == 3)
        for length in 0..<payload.count {
            let prefix = Array(payload.prefix(length))
            if let count = boundaries[length] {
                // A cut exactly at an envelope boundary decodes, to the envelopes before it.
                #expect(try Batch.unpack(prefix) == Array(messages.prefix(count)), "cut at \(length)")
            } else {
                // Any other cut is refused: never a shorter batch, never a crash.
                let error = #expect(throws: WireError.self, "cut at \(length)") { try Batch.unpack(prefix) }
                #expect(error?.code == .malformedFrame)
                #expect(error?.message.contains("truncated") == true, "cut at \(length): \(error?.message ?? "")")
            }
        }
    }

    /// A client's batch must hold as many envelopes as its header says, and at least one: an
    /// empty batch would get no reply at all.
    @Test func aClientBatchMustHoldTheEnvelopesItsHeaderCounts() throws {
        let batch = Batch.pack((1...3).map(Self.message))
        #expect(try Batch.envelopes(in: batch.payload, count: 3).count == 3)
        // A header that counts fewer is refused once that many are read: the rest is not walked.
        for count: UInt64 in [0, 1, 2] {
            let error = #expect(throws: WireError.self) { try Batch.envelopes(in: batch.payload, count: count) }
            #expect(error?.code == .malformedFrame)
            #expect(error?.message.contains("says \(count) envelope(s) but the payload holds more") == true, "\(error?.message ?? "")")
        }
        let more = #expect(throws: WireError.self) { try Batch.envelopes(in: batch.payload, count: 4) }
        #expect(more?.code == .malformedFrame)
        #expect(more?.message.contains("says 4 envelope(s) but the payload holds 3") == true, "\(more?.message ?? "")")
        // Past the count, even bytes that are no envelope are not read: the refusal is the count's.
        let tail = #expect(throws: WireError.self) { try Batch.envelopes(in: batch.payload + [0xFF], count: 3) }
        #expect(tail?.message.contains("says 3 envelope(s) but the payload holds more") == true, "\(tail?.message ?? "")")
        for count: UInt64 in [0, 1] {
            let error = #expect(throws: WireError.self) { try Batch.envelopes(in: [], count: count) }
            #expect(error?.code == .malformedFrame)
            #expect(error?.message.contains("holds no envelopes") == true, "\(error?.message ?? "")")
        }
    }

    @Test func nestedBatchesAndUnknownKindsAreRefused() {
        var nested: [UInt8] = []
        Batch.append(WireMessage(Header(.event), address: "a", payload: [1]), to: &nested)
        nested[0] = MessageKind.batch.rawValue
        #expect(throws: WireError.self) { try Batch.unpack(nested) }
        nested[0] = 0x7E
        let error = #expect(throws: WireError.self) { try Batch.unpack(nested) }
        #expect(error?.message.contains("0x7e") == true)
    }

    /// An envelope's flags are a header's: bits protocol v1 does not define are refused.
    @Test func anEnvelopeWithAnUndefinedFlagIsRefused() {
        var payload: [UInt8] = []
        Batch.append(WireMessage(Header(.event, correlation: 1), address: "a", payload: []), to: &payload)
        Batch.append(WireMessage(Header(.event, correlation: 2), address: "b", payload: []), to: &payload)
        payload[16 + 1 + 1] = 0x80 // the second envelope's flags (the first is 16 bytes and one of address)
        let error = #expect(throws: WireError.self) { try Batch.unpack(payload) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("batch envelope 2 sets flag bits 0x80") == true, "\(error?.message ?? "")")
    }

    /// Each envelope carries its address; one in the batch's own frame would be ignored.
    @Test func aBatchWithAnAddressFrameIsRefused() throws {
        var batch = Batch.pack([WireMessage(Header(.get, correlation: 1), address: "a"), WireMessage(Header(.get, correlation: 2), address: "b")])
        batch.address = "counter/x"
        let error = #expect(throws: WireError.self) { try WireMessage(frames: batch.frames) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("a batch's address frame (frame 1) must be empty") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("got 9 bytes") == true, "\(error?.message ?? "")")
        #expect(Batch.addressRefusal(0) == nil)
    }

    @Test func aNonUTF8AddressIsRefused() {
        var payload: [UInt8] = []
        Batch.append(WireMessage(Header(.event), address: "ab", payload: []), to: &payload)
        payload[12] = 0xFF // the first address byte
        let error = #expect(throws: WireError.self) { try Batch.unpack(payload) }
        #expect(error?.message.contains("UTF-8") == true)
    }
}
