// ndn-cxx's side of crates/routing/tests/ndn_cxx.rs: reads a Prefix Announcement (hex in
// argv[1]) with ndn-cxx's own ndn::PrefixAnnouncement, as NFD's rib/announce does, and checks
// its signature with ndn::security::verifySignature and the key Nameway carries in
// NwPublicKey (0x8e02; ndn-cxx skips it as a non-critical element). Prints one JSON line.
#include <ndn-cxx/data.hpp>
#include <ndn-cxx/encoding/block-helpers.hpp>
#include <ndn-cxx/prefix-announcement.hpp>
#include <ndn-cxx/security/verification-helpers.hpp>
#include <ndn-cxx/util/string-helper.hpp>

#include <iostream>

int
main(int argc, char** argv)
{
  if (argc != 2) {
    std::cerr << "usage: pa_ndncxx HEX\n";
    return 2;
  }
  try {
    auto buffer = ndn::fromHex(argv[1]);
    ndn::Data data{ndn::Block(*buffer)};
    ndn::PrefixAnnouncement pa(data);
    bool verified = false;
    ndn::Block content = data.getContent();
    content.parse();
    auto key = content.find(0x8e02);
    if (key != content.elements_end()) {
      verified = ndn::security::verifySignature(data, key->value_bytes());
    }
    std::string notBefore, notAfter;
    if (auto vp = pa.getValidityPeriod()) {
      auto period = vp->getPeriod();
      notBefore = ndn::time::toIsoString(period.first);
      notAfter = ndn::time::toIsoString(period.second);
    }
    std::cout << "{\"announced\":\"" << pa.getAnnouncedName().toUri()
              << "\",\"expiration_ms\":" << pa.getExpiration().count()
              << ",\"not_before\":\"" << notBefore << "\",\"not_after\":\"" << notAfter
              << "\",\"signature_type\":" << data.getSignatureType()
              << ",\"verified\":" << (verified ? "true" : "false") << "}" << std::endl;
    return 0;
  }
  catch (const std::exception& e) {
    std::cout << "{\"error\":\"" << e.what() << "\"}" << std::endl;
    return 1;
  }
}
