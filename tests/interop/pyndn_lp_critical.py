"""What python-ndn does with an LpPacket carrying a header field it does not know.

Usage: pyndn_lp_critical.py LPPACKET_HEX

Runs the same parse python-ndn's NDNApp runs on every LpPacket it receives
(``ndn.encoding.parse_lp_packet``) and prints one JSON line:
``{"delivered": bool, "fragment": hex | null, "error": str | null}``: whether the app would
take the fragment (the Data inside) as if the field were not there.
"""
import json
import sys

from ndn.encoding import parse_lp_packet


def main() -> None:
    wire = bytes.fromhex(sys.argv[1])
    try:
        _nack, fragment = parse_lp_packet(wire, with_tl=True)
        out = {"delivered": fragment is not None,
               "fragment": bytes(fragment).hex() if fragment is not None else None,
               "error": None}
    except Exception as e:  # python-ndn raises DecodeError (and others) on what it refuses
        out = {"delivered": False, "fragment": None, "error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
