@testable import GroveWorker
import Testing

/// What an instance remembers of one client's sequences (``ClientSequences``): fed applied
/// sequences, its verdicts and its bytes checked.
@Suite(.timeLimit(.minutes(2))) struct ClientSequencesTests {
    static func applied(_ sequences: [UInt64]) -> ClientSequences {
        var book = ClientSequences()
        for sequence in sequences { book.applied(sequence) }
        return book
    }

    @Test func aRunWithHolesTellsAppliedFromNewWhateverTheOrder() {
        let book = Self.applied([1, 2, 6, 3, 9])
        #expect(book.highest == 9)
        #expect(book.gaps == [4...5, 7...8])
        #expect([1, 2, 3, 6, 9].map(book.verdict(of:)) == Array(repeating: .applied, count: 5))
        #expect([4, 5, 7, 8, 10, 1_000].map(book.verdict(of:)) == Array(repeating: .new, count: 6))
    }

    @Test func fillingAHoleSplitsOrClosesIt() {
        var book = Self.applied([10])
        #expect(book.gaps == [1...9])
        book.applied(5)
        #expect(book.gaps == [1...4, 6...9])
        book.applied(1)
        book.applied(9)
        #expect(book.gaps == [2...4, 6...8])
        for sequence: UInt64 in [2, 3, 4, 6, 7, 8] { book.applied(sequence) }
        #expect(book.gaps == [])
        // Applying what was applied changes nothing.
        book.applied(5)
        #expect(book == Self.applied(Array(1...10)))
    }

    @Test func pastTheBoundTheOldestHolesAreGivenUpAndTheirSequencesCannotBeTold() {
        let count = UInt64(ClientSequences.maximumGaps)
        // Every other sequence: a hole of one before each.
        let book = Self.applied(Array(stride(from: 2, through: 2 * (count + 3), by: 2)))
        #expect(book.gaps.count == ClientSequences.maximumGaps)
        #expect(book.floor == 5)
        #expect([1, 3, 4, 5].map(book.verdict(of:)) == Array(repeating: .unknown, count: 4))
        #expect(book.verdict(of: 7) == .new)
        #expect(book.verdict(of: 6) == .applied)
    }

    @Test func itsBytesReadBackAndDamagedOnesAreRefused() {
        let book = Self.applied([1, 2, 6, 3, 9, UInt64.max - 1])
        #expect(ClientSequences(encoded: book.encoded) == book)
        #expect(ClientSequences(encoded: ClientSequences().encoded) == ClientSequences())
        var newer = book.encoded
        newer[0] = 2
        #expect(ClientSequences(encoded: newer) == nil)
        #expect(ClientSequences(encoded: Array(book.encoded.dropLast())) == nil)
        // Holes out of order are not what a store was given.
        var bytes = Self.applied([1, 5, 9]).encoded
        bytes.replaceSubrange(17..<49, with: bytes[33..<49] + bytes[17..<33])
        #expect(ClientSequences(encoded: bytes) == nil)
    }
}
