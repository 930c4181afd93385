"""Visual perturbations of category digital: compression (JPEG, MPEG, H.264/H.265, bitstream
faults), elastic transform, pixelate and the colour ops (brightness, contrast, saturate).

Registrations only; the kernels are in :mod:`..kernels`, registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels import imagenet_c_colour, imagenet_c_pixelate, jpeg_mpeg  # noqa: F401  (register their kernels)
from ..kernels.bitstream import draw_fault_key
from ..kernels.h26x import OPS as H26X_OPS, SOURCE as KINETICS_SOURCE
from ..kernels.imagenet_c import ROUNDING, SOURCE, draw_elastic
from ..kernels.twins import kernels_of
from ..render import CLIP, PREFIX, Renderer
from ..severity_params import paper_table, source_order_note, table

_CODEC = dict(modality="video", category="digital", random=False, temporal=False)
_STREAM = dict(_CODEC, stream=True)     # re-encodes the clip as a video stream: no meaning on one image
_CODEC_DEVIATION = (
    "The reference passes -q:v {levels} to ffmpeg, which clamps the quantiser at 31, so its "
    "severities 2-5 were identical. Here the quantiser is fixed (qmin = qmax) at five distinct "
    "levels spanning the encoder's useful range, chosen so that the mean PSNR on the sample clip "
    "falls strictly with severity; a bitrate cap was measured to add at most 0.1 dB of distortion beyond q = 31, so none is used. "
    "The re-encoding runs in memory and keeps every frame aligned (the reference could drop or "
    "shift frames).")

register(Spec(name="jpeg", render=Renderer(kernels=kernels_of("jpeg")),
              aliases=("JPEG", "JPEG Compression", "jpeg_compression"),
              summary="Per-frame JPEG compression at decreasing quality",
              severities=table("jpeg"), **_CODEC))
register(Spec(name="mpeg1",
              render=Renderer(PREFIX, kernels=kernels_of("mpeg1")),
              aliases=("MPEG1", "Codec1"),
              summary="Whole clip re-encoded with the mpeg2video encoder at a fixed quantiser",
              severities=table("mpeg1"), paper=paper_table("mpeg1"),
              deviation=_CODEC_DEVIATION.format(levels="20, 40, 60, 80, 100"), **_STREAM))
register(Spec(name="mpeg2",
              render=Renderer(PREFIX, kernels=kernels_of("mpeg2")),
              aliases=("MPEG2", "Codec2"),
              summary="Whole clip re-encoded with the mpeg4 encoder at a fixed quantiser",
              severities=table("mpeg2"), paper=paper_table("mpeg2"),
              deviation=_CODEC_DEVIATION.format(levels="15, 30, 45, 60, 75"), **_STREAM))
register(Spec(
    name="elastic_transform", modality="video", category="digital",
    render=Renderer(draw=draw_elastic, kernels=kernels_of("elastic_transform"),
                    cpu_kernel="torch"),                   # one grid_sample: faster than the conversions
    aliases=("Elastic", "Elastic Transform"),
    summary="Resample each frame at positions moved by a smooth random displacement field",
    severities=table("elastic_transform"),
    deviation=f"Source: {SOURCE}. The displacement field is drawn once per clip (a warped medium "
              "that stays put; the image suite draws one per image) and rendered with OpenCV's "
              "bilinear remap (positions to 1/32 px) where the reference calls scipy's "
              "map_coordinates. " + ROUNDING))
register(Spec(
    name="pixelate", modality="video", category="digital",
    render=Renderer(kernels=kernels_of("pixelate")),
    aliases=("Pixelation",),
    summary="Box-shrink each frame to 60%-25% of its size and enlarge it back with nearest neighbour",
    severities=table("pixelate"), random=False,
    deviation=f"Source: {SOURCE}. Pillow's BOX shrink and NEAREST enlargement re-stated in exact "
              "integers (Pillow's pixel boxes, fixed-point weights and rounding, pass by pass), "
              "so the output is Pillow's columns-then-rows resize (Pillow 13 resizes rows first "
              "where the height shrinks by more and then differs by a level on some pixels of "
              "frames taller than wide); the small side is at least one pixel (Pillow refuses "
              "a zero size)."))


def _renderer(name: str, cpu_kernel: str = "numpy") -> Renderer:
    return Renderer(kernels=kernels_of(name), torch_frames="clip", cpu_kernel=cpu_kernel)


_COLOUR = dict(modality="video", category="digital", random=False)

register(Spec(
    name="brightness", render=_renderer("brightness", cpu_kernel="torch"),  # faster on float clips
    summary="HSV value raised by 0.1-0.5 of full scale, hue and saturation kept",
    severities=table("brightness"),
    deviation=f"Source: {SOURCE}. scikit-image's RGB->HSV->RGB round trip replaced by its closed "
              "form (a 256x256 lookup table on the pixel's max and the channel). " + ROUNDING,
    **_COLOUR))
register(Spec(
    name="contrast", render=_renderer("contrast"),
    summary="Each channel pulled towards its frame mean by a factor 0.4-0.05",
    severities=table("contrast"),
    deviation=f"Source: {SOURCE}. The per-channel frame mean comes from exact integer sums and the "
              "mapping is a per-frame lookup table. " + ROUNDING,
    **_COLOUR))
register(Spec(
    name="saturate", render=_renderer("saturate"),
    summary="HSV saturation scaled and offset: x2, x0.3, x5+0.1, x0.1, x20+0.2",
    severities=table("saturate"), paper=paper_table("saturate"),
    deviation=f"Source: {SOURCE}. The source's five levels (x0.3, x0.1, x2, x5+0.1, x20+0.2) are "
              "not in order of damage: on the sample clip their mean PSNR is 16.8, 14.6, 18.2, "
              "14.6, 12.9 dB. The same five are used, reordered by damage (18.2, 16.8, 14.60, "
              "14.58, 12.9 dB), so averages over severities are unchanged. " + source_order_note("saturate")
              + " scikit-image's "
              "RGB->HSV->RGB round trip is replaced by its closed form; greys turn red as "
              "saturation is added, as in the reference (its hue of a grey is 0). " + ROUNDING,
    **_COLOUR))


_ENCODE = ("Encoded in memory through PyAV's {encoder} (preset medium) at 25 fps on one thread{threads}, "
           "so the bitstream is the same on every machine. Odd sides are padded by repeating the "
           "edge pixels{pad} and cropped back after decoding (the reference crops odd sides off). ")
_PAD = {"libx264": "", "libx265": " (x265: to multiples of 8 of at least 72, below which x265 "
                                  "overruns its heap or reads uninitialised memory)"}
_THREADS = {"libx264": "", "libx265": " (x265 without a thread pool: its output depends on the pool size, "
                                      "and a pool worker deciding frame types could leave a flush spinning)"}
_CRF = ("Source: " + KINETICS_SOURCE + ": `ffmpeg -vcodec {encoder} -crf c` with the encoder's defaults. "
        "Here B-frames and look-ahead are off (the zerolatency tune; x264 then has no mb-tree, x265 "
        "no cu-tree), so output frame t depends on input frames 0..t only: a subset of frames "
        "renders from that prefix, exactly as in the whole clip. ")
_ABR = ("Source: " + KINETICS_SOURCE + ": the source file's bit rate (ffprobe's format bit_rate, audio "
        "included) divided by 2, 4, 8, 16, 32 is passed as -b:v, -maxrate and -bufsize. A clip in "
        "memory has no source file: its source bitrate here is that of the clip encoded as "
        "ffmpeg's default libx264 encode makes it (CRF 23, preset medium, the way the reference's "
        "packet-loss tool makes its sources; mb-tree off, which reads uninitialised memory in "
        "libx264), in bits per second at 25 fps, and the target is that divided by the divisor "
        "(at least 1 kbit/s). The encoder keeps its default B-frames and look-ahead{mbtree}, so "
        "every output frame depends on the whole clip. ")
_MBTREE = {"libx264": " (mb-tree off, as in the source)", "libx265": ""}


def _register(name: str, aliases: tuple[str, ...], summary: str) -> None:
    mode, codec = H26X_OPS[name]
    text = (_CRF if mode == "crf" else _ABR).format(encoder=codec, mbtree=_MBTREE[codec])
    text += _ENCODE.format(encoder=codec, threads=_THREADS[codec], pad=_PAD[codec])
    register(Spec(name=name,
                  render=Renderer(PREFIX if mode == "crf" else CLIP, kernels=kernels_of(name)),
                  aliases=aliases, summary=summary, severities=table(name),
                  deviation=text, **_STREAM))


_register("h264_crf", ("H.264 CRF", "avc_crf"),
          "Whole clip re-encoded with H.264 (libx264) at a constant rate factor")
_register("h264_abr", ("H.264 ABR", "avc_abr"),
          "Whole clip re-encoded with H.264 (libx264) at an average bitrate below the source's")
_register("h265_crf", ("H.265 CRF", "hevc_crf"),
          "Whole clip re-encoded with H.265 (libx265) at a constant rate factor")
_register("h265_abr", ("H.265 ABR", "hevc_abr"),
          "Whole clip re-encoded with H.265 (libx265) at an average bitrate below the source's")


_KINETICS_STREAM = ("The clip is first encoded as its source: ffmpeg's default libx264 encode (CRF 23, "
                  "preset medium, B-frames; mb-tree off, which reads uninitialised memory in libx264) "
                  "at 25 fps on one thread, in memory through PyAV; odd sides are padded by repeating "
                  "edge pixels and cropped back. ")
_DECODE = ("The damaged stream is decoded by FFmpeg's H.264 decoder with its default error "
           "concealment; a unit it rejects is skipped, and a frame it does not return repeats the "
           "last frame it did (mid-grey before the first), so the output keeps its T frames. "
           "The whole clip is read (the source's B-frames make a frame depend on later ones). ")
_NESTED = ("The damaged units are chosen uniformly without replacement by perturb's seeded generator "
           "(one key per clip) and a higher severity damages the same units and more; at least "
           "`at_least` units (the severity level) are damaged, so short clips keep five strictly "
           "ordered levels (the 32-frame sample clip's source has 49 kB: one byte in 100,000 rounds "
           "to none of them, one in 30,000 and one in 20,000 both to two; its 34 datagrams lose 0, 1, "
           "1, 1, 2 at 1-6%). ")

_FAULT = dict(modality="video", category="digital", random=True, temporal=False, stream=True)
register(Spec(name="bit_error",
              render=Renderer(CLIP, draw=draw_fault_key, kernels=kernels_of("bit_error")),
              aliases=("Bit Error", "bit_errors"),
              summary="Bytes of the clip's H.264 stream corrupted (one in 100,000 to one in 10,000), "
                      "decoded with concealment",
              severities=table("bit_error"),
              deviation=("Source: " + KINETICS_SOURCE + ": `ffmpeg -i src -c copy -bsf noise=N` on the source "
                         "file, N = 100000, 50000, 30000, 20000, 10000, which damages about one byte in N "
                         "of every packet (FFmpeg's noise filter picks the bytes with a running sum of the "
                         "data, unseeded). " + _KINETICS_STREAM + "Here round(size / N) bytes of its access "
                         "units are XORed with a random non-zero value. The parameter sets travel out of "
                         "band and are never damaged, as the noise filter leaves an MP4 source's avcC box "
                         "alone. " + _NESTED + _DECODE), **_FAULT))
register(Spec(name="packet_loss",
              render=Renderer(CLIP, draw=draw_fault_key, kernels=kernels_of("packet_loss")),
              aliases=("Packet Loss",),
              summary="1-6% of the UDP datagrams of the clip's H.264 stream lost, decoded with concealment",
              severities=table("packet_loss"),
              deviation=("Source: Yi et al. 2021's packet-loss-simulation (packet_loss.sh, "
                         "packet_loss_simulation.py): the video converted to raw H.264 by `ffmpeg -i src "
                         "out.h264` is streamed with `ffmpeg -f h264 udp://` (1472-byte datagrams) over a "
                         "Mininet link that loses 1, 2, 3, 4 or 6% of packets, and the receiver remuxes what "
                         "arrives. " + _KINETICS_STREAM + "Here its access units are cut into 1472-byte "
                         "datagrams in memory and round(loss x datagrams) of them are lost (a netem link "
                         "drops each packet independently, so its count varies from clip to clip). Each "
                         "access unit is decoded from the bytes of its datagrams that arrived, in order (a "
                         "receiver that knows frame boundaries, as RTP timestamps give). The parameter "
                         "sets travel out of band (as an RTP session's SDP carries them), so a lost first "
                         "datagram damages the first frame instead of the whole clip. " + _NESTED + _DECODE
                         ), **_FAULT))
