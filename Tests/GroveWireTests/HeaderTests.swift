import GroveWire
import Testing

@Suite("Header", .timeLimit(.minutes(2)))
struct HeaderTests {
    /// Correlations that sit on byte and sign boundaries, where a wrong shift or a signed
    /// conversion would show.
    static let edgeCorrelations: [UInt64] = [
        0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000, UInt64(UInt32.max), UInt64(UInt32.max) + 1,
        UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max - 1, UInt64.max,
    ]

    @Test(arguments: MessageKind.allCases)
    func roundTripsEveryKindWithEdgeCorrelationsAndFlags(kind: MessageKind) throws {
        let flagSets: [Header.Flags] = [[], .binary, .noWait, [.binary, .noWait], .defined]
        for flags in flagSets {
            for correlation in Self.edgeCorrelations {
                let header = Header(kind, flags: flags, correlation: correlation)
                let bytes = header.bytes
                #expect(bytes.count == Header.size)
                let parsed = try Header(bytes)
                #expect(parsed == header, "kind \(kind) flags \(flags.rawValue) correlation \(correlation)")
            }
        }
    }

    @Test func roundTripsRandomHeaders() throws {
        var random = SeededGenerator(seed: 0x6772_6F76_65)
        let kinds = MessageKind.allCases
        for _ in 0..<5000 {
            let kind = kinds.randomElement(using: &random)!
            let flags = Header.Flags(rawValue: UInt8.random(in: .min ... .max, using: &random) & Header.Flags.defined.rawValue)
            // Mix full-width values with small ones so both ends of the range are exercised.
            let correlation = Bool.random(using: &random)
                ? random.next()
                : random.next() >> UInt64.random(in: 0..<64, using: &random)
            let header = Header(kind, flags: flags, correlation: correlation)
            let parsed = try Header(header.bytes)
            #expect(parsed.kind == kind)
            #expect(parsed.flags == flags)
            #expect(parsed.correlation == correlation)
        }
    }

    @Test func bytesFollowTheDocumentedLayout() {
        let header = Header(.ioResult, flags: [.binary, .noWait], correlation: 0x0102_0304_0506_0708)
        #expect(header.bytes == [0x47, 0x01, 0x31, 0x03, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08])

        let plain = Header(.event)
        #expect(plain.bytes == [0x47, 0x01, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])

        let noWait = Header(.event, flags: .noWait, correlation: 0xFF)
        #expect(noWait.bytes[3] == 0x02)
        #expect(Array(noWait.bytes[4...]) == [0, 0, 0, 0, 0, 0, 0, 0xFF])

        let biggest = Header(.state, correlation: .max)
        #expect(Array(biggest.bytes[4...]) == Array(repeating: 0xFF, count: 8))
    }

    @Test func constantsMatchTheProtocol() {
        #expect(Header.magic == 0x47)
        #expect(Header.version == 1)
        #expect(Header.size == 12)
        #expect(Header.Flags.binary.rawValue == 0b01)
        #expect(Header.Flags.noWait.rawValue == 0b10)
    }

    @Test func kindNumbersAndNamesMatchDocsProtocol() {
        let documented: [(UInt8, String)] = [
            (0x01, "event"), (0x02, "get"), (0x03, "cancel"), (0x04, "stop"), (0x05, "list"), (0x06, "echo"), (0x07, "batch"), (0x08, "dead-letters"),
            (0x09, "restart"), (0x0A, "snapshot"), (0x0B, "poison"), (0x0C, "locate"),
            (0x10, "state"), (0x11, "accepted"), (0x12, "error"), (0x13, "listing"), (0x14, "dead-letter-list"), (0x15, "states"),
            (0x16, "poison-list"), (0x17, "location"),
            (0x20, "register"), (0x21, "welcome"), (0x22, "heartbeat"), (0x23, "observe"), (0x24, "instances"), (0x25, "quarantine"),
            (0x26, "release"), (0x27, "returned"), (0x28, "access"), (0x29, "placement"),
            (0x30, "io-request"), (0x31, "io-result"), (0x32, "io-cancel"), (0x33, "io-cancelled"),
            (0x40, "state-changed"), (0x41, "effect"), (0x42, "worker"), (0x43, "output"), (0x44, "machine"),
        ]
        #expect(MessageKind.allCases.count == documented.count)
        for (raw, name) in documented {
            let kind = MessageKind(rawValue: raw)
            #expect(kind?.name == name, "kind 0x\(String(raw, radix: 16))")
            #expect(kind?.description == name)
        }
    }

    @Test(arguments: [0, 1, 11, 13, 24])
    func wrongSizeIsMalformedWithoutCorrelation(size: Int) {
        var frame = Header(.event, correlation: 7).bytes
        if size <= frame.count {
            frame = Array(frame.prefix(size))
        } else {
            frame += Array(repeating: 0, count: size - frame.count)
        }
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == nil)
        #expect(error?.message.contains("got \(size) bytes") == true)
    }

    @Test func badMagicIsMalformed() {
        var frame = Header(.event, correlation: 7).bytes
        frame[0] = 0x48
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == nil)
        #expect(error?.message.contains("0x48") == true)
    }

    /// Found by an attacker's review: bit 0x80 was kept and ignored. A flag changes how the
    /// payload is read, so one this reader does not know is refused, naming the frame and bits.
    @Test(arguments: [0x80, 0x20, 0x40, 0xE0, 0x81] as [UInt8])
    func undefinedFlagBitsAreMalformedAndKeepTheCorrelation(flags: UInt8) {
        var frame = Header(.event, correlation: 42).bytes
        frame[3] = flags
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .malformedFrame)
        #expect(error?.correlation == 42)
        let undefined = String(flags & 0xE0, radix: 16)
        #expect(error?.message.contains("the header (frame 0) sets flag bits 0x\(undefined)") == true, "\(error?.message ?? "")")
    }

    @Test func everyDefinedFlagBitIsRead() throws {
        var frame = Header(.event, correlation: 1).bytes
        frame[3] = 0x1F
        #expect(try Header(frame).flags == .defined)
        #expect(Header.Flags.defined.rawValue == 0x1F)
    }

    @Test func versionTwoIsUnsupportedButKeepsTheCorrelation() {
        var frame = Header(.event, correlation: 0xDEAD_BEEF_0000_0042).bytes
        frame[1] = 2
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.correlation == 0xDEAD_BEEF_0000_0042)
        #expect(error?.message.contains("version 2") == true)
    }

    @Test(arguments: [0x00, 0x0F, 0x18, 0x2F, 0x34, 0x4F, 0xFF] as [UInt8])
    func unknownKindKeepsTheCorrelation(kind: UInt8) {
        #expect(MessageKind(rawValue: kind) == nil)
        var frame = Header(.event, correlation: UInt64.max - 3).bytes
        frame[2] = kind
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .unknownKind)
        #expect(error?.correlation == UInt64.max - 3)
        #expect(error?.message.contains("0x\(String(kind, radix: 16))") == true)
    }

    @Test func versionIsCheckedBeforeKind() {
        // A future version may define new kinds; the reply must say "version", not "kind".
        var frame = Header(.event, correlation: 5).bytes
        frame[1] = 2
        frame[2] = 0x7F
        let error = #expect(throws: WireError.self) { try Header(frame) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.correlation == 5)
    }
}

@Suite("Header in borrowed memory", .timeLimit(.minutes(2)))
struct HeaderBorrowedTests {
    /// The stack copy routers send from holds the same 12 bytes as ``Header/bytes``.
    @Test func withUnsafeBytesLendsTheSameBytes() {
        var random = SeededGenerator(seed: 0x6865_6164)
        for _ in 0..<2000 {
            let header = Header(MessageKind.allCases.randomElement(using: &random)!,
                                flags: Header.Flags(rawValue: UInt8.random(in: .min ... .max, using: &random)), correlation: random.next())
            #expect(header.withUnsafeBytes { Array($0) } == header.bytes)
        }
    }

    /// A header read from a window of a larger buffer (as the borrowed receive lends one) reads
    /// only that window: the documented layout from its first byte, and a window of another
    /// size is refused even when more bytes follow in memory.
    @Test func aBufferWindowIsReadFromItsOwnStart() throws {
        var random = SeededGenerator(seed: 0x7769_6E64)
        for _ in 0..<500 {
            let header = Header(MessageKind.allCases.randomElement(using: &random)!,
                                flags: Header.Flags(rawValue: UInt8.random(in: .min ... .max, using: &random) & Header.Flags.defined.rawValue),
                                correlation: random.next())
            let before = (0..<Int.random(in: 0...9, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            let memory = before + header.bytes + [0x47, 1, 1, 0]
            let (read, short) = memory.withUnsafeBytes { raw in
                (Result { () throws(WireError) -> Header in
                    try Header(UnsafeRawBufferPointer(rebasing: raw[before.count ..< before.count + Header.size]))
                }, Result { () throws(WireError) -> Header in
                    try Header(UnsafeRawBufferPointer(rebasing: raw[before.count ..< before.count + Header.size - 1]))
                })
            }
            #expect(try read.get() == header)
            let error = #expect(throws: WireError.self) { try short.get() }
            #expect(error?.code == .malformedFrame)
            #expect(error?.message.contains("got 11 bytes") == true)
        }
    }
}
