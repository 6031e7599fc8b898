import Foundation

extension ClientEnvelope {
    /// What a refused payload still tells about the message it carried, so that its
    /// `message-rejected` names the uid (and hash) a client waits on: the pending message of
    /// a too-large publish, or of one with a key twice elsewhere, resolves instead of hanging.
    public struct Salvage: Equatable, Sendable {
        public var uid: String?
        public var hash: String?

        public init(uid: String? = nil, hash: String? = nil) {
            self.uid = uid
            self.hash = hash
        }
    }

    /// Reads `data.uid` and `hash` from a payload the strict checks refused, when it can be
    /// read unambiguously: a field given twice, or a payload beyond `limit` bytes, is not read.
    public static func salvage(_ payload: [UInt8], limit: Int = 1 << 20) -> Salvage {
        guard payload.count <= limit else { return Salvage() }
        var ambiguous: String?
        do {
            try StrictJSON.check(payload)
        } catch let error as ParleyError {
            ambiguous = error.field
        } catch {
            return Salvage()
        }
        guard let probe = try? JSONCoding.decoder.decode(Probe.self, from: Foundation.Data(payload)) else {
            return Salvage()
        }
        return Salvage(
            uid: ambiguous == "data.uid" || ambiguous == "data" ? nil : probe.data?.uid,
            hash: ambiguous == "hash" ? nil : probe.hash)
    }

    /// Only the two fields, each read only when it is a string.
    private struct Probe: Decodable {
        struct Fields: Decodable {
            let uid: String?
            init(from decoder: any Decoder) throws {
                uid = try? decoder.container(keyedBy: Keys.self).decodeIfPresent(String.self, forKey: .uid)
            }
        }
        enum Keys: String, CodingKey { case uid, data, hash }
        let data: Fields?
        let hash: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            data = try? container.decodeIfPresent(Fields.self, forKey: .data)
            hash = try? container.decodeIfPresent(String.self, forKey: .hash)
        }
    }
}
