@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// The one number a host keeps for a waiting sender: correlation and codec.
@Suite(.timeLimit(.minutes(2)))
struct ReplyTokenTests {
    @Test func aTokenCarriesTheCorrelationAndTheCodec() throws {
        for correlation: UInt64 in [1, 0x7F_FFFF << 40 | 12_345, (1 << 63) - 1] {
            for binary in [false, true] {
                let token = try #require(ReplyToken(correlation: correlation, binary: binary))
                let back = ReplyToken(raw: token.raw)
                #expect(back.correlation == correlation && back.binary == binary)
            }
        }
    }

    @Test func aCorrelationWithTheTopBitHasNoToken() {
        #expect(ReplyToken(correlation: 1 << 63, binary: false) == nil)
        #expect(ReplyToken(correlation: UInt64.max, binary: true) == nil)
    }
}
