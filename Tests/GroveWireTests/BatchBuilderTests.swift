@_spi(GroveInternal) import GroveWire
import Testing

@Suite("BatchBuilder and envelopes", .timeLimit(.minutes(2)))
struct BatchBuilderTests {
    @Test func builtBatchesMatchPackedOnes() throws {
        let messages = (0..<150).map(BatchTests.message)
        var builder = BatchBuilder()
        for message in messages { builder.append(message) }
        #expect(builder.count == 150)
        #expect(builder.frames() == Batch.pack(messages).frames)
        builder.removeAll()
        #expect(builder.isEmpty)
        builder.append(messages[3])
        // One envelope leaves as the plain message, not a batch of one.
        #expect(builder.frames() == messages[3].frames)
    }

    /// Short addresses are written with the envelope's fixed fields in one copy, longer ones
    /// apart: both make the bytes `Batch.pack` makes, on either side of the cut.
    @Test func addressesOfEveryLengthMatchPackedOnes() throws {
        let messages = (0 ... 100).map { length in
            WireMessage(Header(.event, correlation: UInt64(length)), address: String(repeating: "a", count: length),
                        payload: Array(repeating: UInt8(length), count: length % 7))
        }
        var builder = BatchBuilder()
        for message in messages { builder.append(message) }
        #expect(builder.frames() == Batch.pack(messages).frames)
        // Forwarded from that batch under other ids, as routers do: the same envelopes.
        var forwarded = BatchBuilder()
        let payload = builder.payload
        for envelope in try Batch.envelopes(in: payload) {
            forwarded.append(envelope, from: payload, correlation: envelope.correlation + 1000)
        }
        let renumbered = messages.map { message in
            var message = message
            message.header.correlation += 1000
            return message
        }
        #expect(forwarded.frames() == Batch.pack(renumbered).frames)
    }

    /// A payload written in place makes the same batch as one appended as bytes; a writer that
    /// throws leaves the batch as it was.
    @Test func payloadsWrittenInPlaceMatchAppendedOnes() throws {
        struct Refused: Error {}
        let messages = (0..<30).map(BatchTests.message)
        var builder = BatchBuilder()
        for (index, message) in messages.enumerated() {
            builder.append(kind: message.header.kind, flags: message.header.flags, correlation: message.header.correlation,
                           address: message.address.utf8) { (bytes: inout [UInt8]) in bytes += message.payload }
            if index % 7 == 0 {
                let before = builder.payload
                #expect(throws: Refused.self) {
                    try builder.append(kind: .state, flags: [], correlation: 9, address: "x".utf8) { (bytes: inout [UInt8]) throws(Refused) in
                        bytes += [1, 2, 3]
                        throw Refused()
                    }
                }
                #expect(builder.payload == before)
            }
        }
        #expect(builder.count == messages.count)
        #expect(builder.frames() == Batch.pack(messages).frames)
    }

    @Test func envelopesPointIntoThePayload() throws {
        let messages = (0..<40).map(BatchTests.message)
        let payload = Batch.pack(messages).payload
        let envelopes = try Batch.envelopes(in: payload)
        #expect(envelopes.count == messages.count)
        for (envelope, message) in zip(envelopes, messages) {
            #expect(envelope.kind == message.header.kind)
            #expect(envelope.flags == message.header.flags)
            #expect(envelope.correlation == message.header.correlation)
            #expect(Array(payload[envelope.address]) == Array(message.address.utf8))
            #expect(try envelope.message(in: payload) == message)
        }
    }

    @Test func forwardingAnEnvelopeCopiesItUnderANewCorrelation() throws {
        let messages = (0..<10).map(BatchTests.message)
        let payload = Batch.pack(messages).payload
        var builder = BatchBuilder()
        for (index, envelope) in try Batch.envelopes(in: payload).enumerated() {
            builder.append(envelope, from: payload, correlation: UInt64(1000 + index))
        }
        let forwarded = try Batch.unpack(builder.payload)
        #expect(forwarded.map(\.header.correlation) == (1000..<1010).map(UInt64.init))
        #expect(forwarded.map(\.address) == messages.map(\.address))
        #expect(forwarded.map(\.payload) == messages.map(\.payload))
        #expect(forwarded.map(\.header.kind) == messages.map(\.header.kind))
    }

    /// A lone envelope is lent as a plain message's frames; any other count lends nothing, and
    /// `frames()` sends those as one batch.
    @Test func aLoneEnvelopeIsLentAsAPlainMessage() throws {
        let messages = (0..<2).map(BatchTests.message)
        var builder = BatchBuilder()
        #expect(builder.withLoneMessage { _, _, _ in true } == nil)
        builder.append(messages[0])
        let lent = builder.withLoneMessage { [Array($0), Array($1), Array($2)] }
        #expect(lent == messages[0].frames)
        #expect(builder.frames() == messages[0].frames)
        builder.append(messages[1])
        #expect(builder.withLoneMessage { _, _, _ in true } == nil)
        #expect(try Batch.unpack(builder.frames()[2]) == messages)
    }

    @Test func aMalformedBatchIsRefusedAsAWhole() {
        var payload = Batch.pack((0..<5).map(BatchTests.message)).payload
        payload.removeLast()
        #expect(throws: WireError.self) { try Batch.envelopes(in: payload) }
    }
}
