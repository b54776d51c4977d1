@_spi(GroveInternal) import GroveWire
import Testing

@Suite("WireMessage", .timeLimit(.minutes(2)))
struct WireMessageTests {
    @Test func framesAreHeaderAddressPayload() {
        let message = WireMessage(Header(.event, flags: .noWait, correlation: 3), address: "poller/eu-1",
                                  payload: Array(#"{"start":{}}"#.utf8))
        let frames = message.frames
        #expect(frames.count == 3)
        #expect(frames[0] == Header(.event, flags: .noWait, correlation: 3).bytes)
        #expect(frames[1] == Array("poller/eu-1".utf8))
        #expect(frames[2] == Array(#"{"start":{}}"#.utf8))
    }

    @Test func roundTripsRandomMessages() throws {
        var random = SeededGenerator(seed: 42)
        let alphabet = Array("abcXYZ019/-_.:é🌳")
        for _ in 0..<2000 {
            let kind = MessageKind.allCases.randomElement(using: &random)!
            let header = Header(kind, flags: Header.Flags(rawValue: UInt8.random(in: 0...3, using: &random)),
                                correlation: random.next())
            // A batch's envelopes carry the addresses; its own address frame is empty.
            let length = Int.random(in: 0...20, using: &random)
            let address = kind == .batch ? "" : String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            let payload = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            let message = WireMessage(header, address: address, payload: payload)
            let parsed = try WireMessage(frames: message.frames)
            #expect(parsed == message)
        }
    }

    @Test func parsesFromASliceAsARouterDeliversIt() throws {
        // A ROUTER socket puts the peer's routing id in front; callers drop it and pass the rest.
        let message = WireMessage(Header(.get, correlation: 9), address: "auth")
        let received: [[UInt8]] = [Array("client-1".utf8)] + message.frames
        let parsed = try WireMessage(frames: received.dropFirst())
        #expect(parsed == message)
        #expect(parsed.payload.isEmpty)
    }

    /// Any collection of frames parses, and is refused, as an array of them is.
    @Test func parsesFromAnyCollectionOfFrames() throws {
        let message = WireMessage(Header(.event, flags: .binary, correlation: 12), address: "counter/7", payload: [1, 2, 3])
        #expect(try WireMessage(frames: AnyCollection(message.frames)) == message)
        let twoFrames = AnyCollection(Array(message.frames.prefix(2)))
        let error = #expect(throws: WireError.self) { try WireMessage(frames: twoFrames) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == 12)
    }

    @Test func emptyAddressAndPayloadAreFine() throws {
        let parsed = try WireMessage(frames: [Header(.list, correlation: 1).bytes, [], []])
        #expect(parsed.address == "")
        #expect(parsed.payload == [])
        #expect(parsed.header.kind == .list)
    }

    @Test func noFramesIsMalformed() {
        let error = #expect(throws: WireError.self) { try WireMessage(frames: [[UInt8]]()) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == nil)
    }

    @Test(arguments: [1, 2, 4, 5])
    func wrongFrameCountIsMalformedWithTheCorrelation(count: Int) {
        let header = Header(.event, correlation: 77).bytes
        let frames = [header] + Array(repeating: Array("x".utf8), count: count - 1)
        let error = #expect(throws: WireError.self) { try WireMessage(frames: frames) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == 77)
        #expect(error?.message.contains("has \(count) frames") == true)
    }

    /// Found by an attacker's review: a socket keeps the first frames of a message and drops the
    /// rest; the refusal gives the frames the message had, not the ones kept.
    @Test func aRefusalForTheFrameCountGivesTheCountReceived() {
        let header = Header(.event, correlation: 9).bytes
        let kept = [header] + Array(repeating: [UInt8](), count: 6)
        let error = #expect(throws: WireError.self) { try WireMessage(frames: kept[...], received: 10) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == 9)
        #expect(error?.message.contains("has 10 frames") == true, "\(error?.message ?? "")")
    }

    @Test func headerErrorsComeFirst() {
        // A bad header with the wrong frame count reports the header, which is what the peer got wrong first.
        var header = Header(.event, correlation: 12).bytes
        header[1] = 9
        let error = #expect(throws: WireError.self) { try WireMessage(frames: [header, []]) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.correlation == 12)

        let short = #expect(throws: WireError.self) { try WireMessage(frames: [[0x47, 1, 1], [], []]) }
        #expect(short?.code == .malformedFrame)
        #expect(short?.correlation == nil)
    }

    @Test(arguments: [[0xFF], [0xC3, 0x28], [0x61, 0x80, 0x62], [0xED, 0xA0, 0x80]] as [[UInt8]])
    func nonUTF8AddressIsMalformedWithTheCorrelation(address: [UInt8]) {
        let frames = [Header(.event, correlation: 31).bytes, address, Array("{}".utf8)]
        let error = #expect(throws: WireError.self) { try WireMessage(frames: frames) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == 31)
        #expect(error?.message.contains("UTF-8") == true)
    }

    @Test func anErrorReplyNamesTheAddressInItsFrameAndItsPayload() throws {
        let asked = WireMessage.error(WireError(.unknownMachine, "no such machine"), correlation: 7, address: "tally/k")
        #expect(asked.header == Header(.error, correlation: 7))
        #expect(asked.address == "tally/k")
        let said = try WireJSON.decode(WireError.self, from: asked.payload)
        #expect(said.code == .unknownMachine && said.address == "tally/k" && said.message == "no such machine")

        // Without an address of the request's, the error's own; with neither, none.
        let own = WireMessage.error(WireError(.forbidden, "no", address: "auth"), correlation: 1)
        #expect(own.address == "auth")
        #expect(WireMessage.error(WireError(.forbidden, "no"), correlation: 1).address == "")
        // The error's own address stays in its payload when the request named another.
        let kept = WireMessage.error(WireError(.forbidden, "no", address: "auth"), correlation: 1, address: "other")
        #expect(try WireJSON.decode(WireError.self, from: kept.payload).address == "auth")
    }
}
