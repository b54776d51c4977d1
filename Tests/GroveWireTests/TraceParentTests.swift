@_spi(GroveInternal) import GroveWire
import Testing

/// The trace context on the wire (docs/PROTOCOL.md, "Trace context"): flag bit 3, then one
/// length byte and the `traceparent` in front of the payload, carried through every codec path
/// (lone frames, `Batch`, `BatchBuilder`) and stripped by every parser.
@Suite("Trace context on the wire", .timeLimit(.minutes(2)))
struct TraceParentTests {
    static let traceparent = Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)
    static let event = Array(#"{"login":{}}"#.utf8)

    static var traced: WireMessage {
        WireMessage(Header(.event, flags: .binary, correlation: 17), address: "auth", payload: event, trace: traceparent)
    }

    @Test func aTracedMessageHasTheFlagAndThePrefixOnTheWire() throws {
        let frames = Self.traced.frames
        #expect(frames[0][3] == Header.Flags([.binary, .traced]).rawValue)
        #expect(frames[2] == [55] + Self.traceparent + Self.event)
        let parsed = try WireMessage(frames: frames)
        #expect(parsed == Self.traced)
        #expect(parsed.payload == Self.event, "the payload proper, without the prefix")
        #expect(parsed.trace == Self.traceparent)
        #expect(!parsed.header.flags.contains(.traced), "the flag is framing: parsed, it is `trace`")
    }

    @Test func anUntracedMessageIsAsBefore() throws {
        let plain = WireMessage(Header(.event, correlation: 3), address: "auth", payload: Self.event)
        #expect(plain.frames == [Header(.event, correlation: 3).bytes, Array("auth".utf8), Self.event])
        #expect(try WireMessage(frames: plain.frames).trace == nil)
    }

    @Test func theTraceTravelsInBatchesBothWays() throws {
        let plain = WireMessage(Header(.get, correlation: 4), address: "auth")
        let packed = Batch.pack([Self.traced, plain])
        #expect(try Batch.unpack(packed.payload) == [Self.traced, plain])

        var builder = BatchBuilder()
        builder.append(Self.traced)
        builder.append(plain)
        let envelopes = try Batch.envelopes(in: builder.payload)
        #expect(envelopes[0].flags.contains(.traced))
        #expect(try envelopes.map { try $0.message(in: builder.payload) } == [Self.traced, plain])
        // A lone traced envelope goes as a plain message with its prefix.
        var lone = BatchBuilder()
        lone.append(Self.traced)
        #expect(try WireMessage(frames: lone.frames()) == Self.traced)
    }

    @Test func aPrefixThatRunsPastThePayloadIsAMalformedFrame() {
        var frames = Self.traced.frames
        frames[2] = [200] + Array(Self.traceparent.prefix(10))
        let error = #expect(throws: WireError.self) { try WireMessage(frames: frames) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.message.contains("flag bit 3") == true)
        #expect(error?.correlation == 17)
        frames[2] = []
        #expect(throws: WireError.self) { try WireMessage(frames: frames) }
    }

    @Test func anEmptyPayloadAfterTheContextIsFine() throws {
        let get = WireMessage(Header(.get, correlation: 9), address: "auth", trace: Self.traceparent)
        let parsed = try WireMessage(frames: get.frames)
        #expect(parsed.payload.isEmpty && parsed.trace == Self.traceparent)
    }

    @Test(arguments: [
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", nil),
        ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", nil),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "55"),
        ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "lowercase hex"),
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version ff"),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace id is all zeros"),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "parent id is all zeros"),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "exactly 55"),
        ("00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01", "lowercase hex"),
    ] as [(String, String?)])
    func traceparentsAreCheckedByTheirW3CForm(value: String, problem: String?) {
        let found = TraceParent.problem(with: Array(value.utf8))
        if let problem {
            #expect(found?.contains(problem) == true, "\(value): \(found ?? "accepted")")
        } else {
            #expect(found == nil, "\(value): \(found ?? "")")
        }
    }
}
