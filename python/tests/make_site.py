"""Writes the fixture site of the crawl test (python/tests/site/) from the articles below.

Run it after editing an article: ``python python/tests/make_site.py``. The site is three
"sites" under one host:

- ``news/``: the original publisher (The Harbour Ledger): six articles, three English and
  three Chinese, with the publisher's navigation, header and footer;
- ``mirror/``: an aggregator that copies every article whole into its own chrome (another
  navigation, sidebar ads, related links, another footer, another <title> suffix), and
  links two originals again under tracking URLs (``?utm_source=…``);
- ``repost/``: a blog that reposts four articles under edited headlines with an attribution
  line and its own chrome.

- ``sections/``: the publisher's archive pages of one section, six pages under one heading
  and intro, each listing its own stories (links the HTML reader leaves out of the main
  text): by their main texts alone they are one page, by what they show six.

``manifest.json`` says, per page, what it is and what the crawl must find: ``original``
(kept), ``exact`` or ``near`` (dropped as a duplicate of ``of``), ``listing`` (a section
page, kept: crawled on its own).
"""

from __future__ import annotations

import html
import json
import random
from pathlib import Path

SITE = Path(__file__).parent / "site"

ARTICLES = [
    {
        "slug": "harbour-bike-lanes",
        "lang": "en",
        "title": "Council approves a protected bike lane network for the harbour district",
        "paragraphs": [
            "The city council voted nine to two on Tuesday night to build a network of protected bike lanes through the harbour district, ending a debate that has run for almost three years and filled four public hearings with shopkeepers, commuters and parents.",
            "The plan adds eleven kilometres of lanes separated from traffic by concrete kerbs and planters, most of them along Quay Street, Mill Road and the old tram corridor behind the fish market. Construction is due to begin in the spring and to finish before the end of next year.",
            "Supporters pointed to the district's accident record: cyclists were involved in a third of all injury crashes there last year, although they make up fewer than one in ten trips. \"We are not building this for the brave few who already ride,\" said councillor Amira Haddad, who chairs the transport committee. \"We are building it for the ones who would if they felt safe.\"",
            "Opponents, led by the harbour traders' association, warned that removing two hundred parking spaces would hurt small businesses that depend on customers arriving by car. The council promised a delivery bay on every block and a review of loading hours after the first six months.",
            "The project will cost an estimated fourteen million, of which the regional transport fund pays sixty percent. Council staff will publish detailed street designs next month and open them to comment until the end of the summer.",
        ],
    },
    {
        "slug": "teen-sleep-memory",
        "lang": "en",
        "title": "Later school start helped teenagers sleep longer and remember more, study finds",
        "paragraphs": [
            "Teenagers whose school day began an hour later slept on average forty minutes more each night and did better on memory tests, according to a two-year study of four secondary schools published this week by researchers at the university's sleep laboratory.",
            "Two of the schools moved their first lesson from eight o'clock to nine, while the other two kept their timetable. More than eight hundred pupils wore wrist monitors that recorded when they fell asleep and woke up, and sat the same set of recall and attention tests each term.",
            "The pupils at the later-starting schools did not simply go to bed later, which had been the main worry of sceptical head teachers. Their bedtimes moved by only a few minutes, so almost all of the extra time in the morning became extra sleep.",
            "On the memory tests the gap was modest but consistent: pupils who slept longer recalled about eight percent more words from a list they had studied the day before. Reported daytime sleepiness fell by a quarter, and absences in the first lesson dropped sharply.",
            "The authors caution that the schools were not chosen at random and that bus timetables, sports training and family routines all have to change with the bell. Still, they argue that adolescent body clocks shift later during puberty, and that timetables built for adults work against them.",
        ],
    },
    {
        "slug": "night-ferry-returns",
        "lang": "en",
        "title": "Night ferry to the islands returns after a decade, with an electric ship",
        "paragraphs": [
            "For the first time in ten years, a night ferry will once again link the mainland port with the outer islands, the regional shipping company announced on Friday. The service starts in June and will sail three times a week, leaving the city pier at half past ten and arriving shortly after dawn.",
            "The route was abandoned when the old diesel vessel was retired and the company could not justify replacing it for a handful of passengers. Since then island residents have relied on a daytime crossing that often sells out in summer, and on an expensive small plane in winter storms.",
            "The new ship is battery powered for the harbour approaches and uses a hybrid system at sea, which the company says will cut fuel use by almost half. It carries two hundred passengers, forty cars and refrigerated containers for the islands' fishing cooperatives, which asked for the night slot so that their catch reaches the morning market.",
            "Cabins have been kept simple: reclining seats, a few four-berth rooms and a small café that closes at midnight. Fares will match the daytime crossing, and island residents keep their existing discount.",
            "Local councillors welcomed the return but asked for a guarantee that the service will survive its first winter. The company said the contract with the regional government runs for eight years and cannot be cancelled for low traffic alone.",
        ],
    },
    {
        "slug": "longjing-spring-harvest",
        "lang": "zh",
        "title": "西湖龙井春茶开采 茶农盼好价",
        "paragraphs": [
            "清明前夕，杭州西湖龙井茶区迎来今年春茶的第一批采摘。清晨六点多，梅家坞村的茶山上已经满是背着竹篓的采茶工，她们手指翻飞，只摘一芽一叶的嫩尖，一个熟练的采茶工一天也只能采到一斤多鲜叶。",
            "今年开春气温回升较快，茶树萌芽比去年早了五六天，但三月中旬的一场倒春寒让部分低洼茶园受了冻。村里的老茶农告诉记者，好在高处的茶园几乎没有受影响，头茬茶的品质和香气都不错。",
            "炒茶师傅是龙井茶的灵魂。在村口的一间老作坊里，五十多岁的陈师傅赤手在两百多度的铁锅里抖、搭、拓、捺，一锅鲜叶要翻炒二十多分钟才能出锅。他说，机器炒茶虽然省力，但手工炒出来的茶叶扁平光滑，香气更足，懂行的客人愿意多花钱。",
            "价格是茶农最关心的事情。今年明前特级龙井的收购价在每斤四千元上下，与去年基本持平。由于直播带货和线上预售越来越普遍，不少年轻茶农开始自己做品牌，直接把茶叶卖给外地消费者，收入比交给茶商时多了两三成。",
            "当地农业部门提醒消费者，购买时认准茶叶包装上的防伪标识，谨防以外地茶冒充西湖龙井。据介绍，今年全区春茶预计产量与去年相当，采摘将持续到四月底。",
        ],
    },
    {
        "slug": "mountain-railway-opens",
        "lang": "zh",
        "title": "山区高铁新线正式开通 沿线县城迈入高铁时代",
        "paragraphs": [
            "本月二十八日上午，连接省城与西部山区的高速铁路新线正式开通运营，首趟列车满载乘客从省城南站驶出，两个小时后抵达终点站。沿线六个县城从此结束了不通高铁的历史，到省城的时间由原来的五个多小时缩短到一个多小时。",
            "这条线路全长二百六十多公里，设计时速二百五十公里，桥梁和隧道占全线长度的八成以上。建设者在施工中穿越了多条断层和溶洞地带，其中最长的一条隧道长达十四公里，仅打通这条隧道就用了将近四年时间。",
            "对于山区群众来说，高铁带来的不只是出行方便。一位在省城打工的村民说，以前回家要先坐大巴再转乡村客车，逢年过节常常买不到票，现在下班后坐高铁当晚就能到家。沿线的特色农产品也有了更快的外运通道，猕猴桃、高山蔬菜可以当天送到城里的超市。",
            "旅游部门对新线寄予厚望。沿线分布着多处国家级风景名胜区和古村落，过去由于交通不便，游客大多只在周边城市停留。开通初期，铁路部门每天安排二十多对列车，并将根据客流情况适时增加周末和节假日的班次。",
            "专家指出，高铁开通后，县城要抓住机遇，完善从车站到景区、园区的公共交通接驳，避免出现人流来得快、走得也快的现象，真正让交通优势转化为发展优势。",
        ],
    },
    {
        "slug": "community-waste-sorting",
        "lang": "zh",
        "title": "老旧小区推行垃圾分类 志愿者守桶三个月见成效",
        "paragraphs": [
            "走进城东的和平里小区，记者看到，原来散落在楼道口的垃圾桶已经被集中到三个分类投放点，每个投放点都摆放着厨余垃圾、可回收物、有害垃圾和其他垃圾四种颜色的桶。每天早晚投放高峰，都有身穿红马甲的志愿者在桶边值守。",
            "和平里小区建于上世纪八十年代，住户中老年人比例较高，不少居民一开始并不理解为什么要分类。社区工作人员挨家挨户上门发放宣传册和分类小垃圾桶，还在活动室举办了十多场讲座，用居民听得懂的话讲解哪些东西属于厨余垃圾。",
            "六十八岁的退休教师王阿姨是第一批报名的志愿者。她说，刚开始守桶时，有的居民嫌麻烦，把垃圾袋往桶边一放就走，她就帮着一袋一袋地拆开重新分拣。时间长了，邻居们不好意思了，主动学着分类，现在破袋投放已经成了大家的习惯。",
            "三个月下来，小区厨余垃圾的分出率从不到一成提高到四成以上，其他垃圾的总量明显减少。街道还在小区引入了可回收物兑换积分的办法，居民攒够积分可以换取洗衣液、大米等生活用品，参与的积极性越来越高。",
            "街道负责人表示，下一步将总结和平里小区的经验，在辖区其他老旧小区逐步推广，同时争取在投放点加装洗手池和遮雨棚，让居民分类投放更加方便。",
        ],
    },
]

# The reposts: which articles, their edited headlines and the attribution line.
REPOSTS = {
    "harbour-bike-lanes": "Harbour district to get protected bike lane network, council decides",
    "night-ferry-returns": "The night boat is back: islands ferry returns with an electric ship",
    "longjing-spring-harvest": "今年的明前龙井开采了，茶农盼个好价钱",
    "mountain-railway-opens": "好消息！山区六县城今天起通高铁",
}
ATTRIBUTION = {"en": "Reposted from The Harbour Ledger.", "zh": "本文转载自港城日报，版权归原作者所有。"}

# The originals the aggregator also links under tracking URLs (the same pages: exact).
TRACKED = ["teen-sleep-memory", "community-waste-sorting"]


def page(title: str, head_title: str, chrome_top: str, body: str, chrome_bottom: str, og: bool = True) -> str:
    og_title = f'<meta property="og:title" content="{html.escape(title)}">\n' if og else ""
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(head_title)}</title>\n{og_title}</head>\n<body>\n{chrome_top}\n{body}\n"
        f"{chrome_bottom}\n</body>\n</html>\n"
    )


def article_body(a: dict, title: str, extra_top: str = "", inline_ad: str = "") -> str:
    paras = [f"<p>{html.escape(p)}</p>" for p in a["paragraphs"]]
    if inline_ad:
        paras.insert(2, inline_ad)
    return (
        f"<article>\n<h1>{html.escape(title)}</h1>\n{extra_top}\n" + "\n".join(paras) + "\n</article>"
    )


NEWS_TOP = """<header><div class="logo">The Harbour Ledger · 港城日报</div>
<nav><a href="/news/index.html">Home</a> <a href="/news/index.html#city">City</a> <a href="/news/index.html#science">Science</a> <a href="/news/index.html#travel">Travel</a> <a href="/news/index.html#zh">中文</a></nav></header>"""
NEWS_BOTTOM = """<footer><p>© 2026 The Harbour Ledger. All rights reserved.</p>
<p><a href="/news/index.html">About us</a> · <a href="/news/index.html">Contact</a> · <a href="/news/index.html">Privacy</a></p></footer>"""

MIRROR_TOP = """<div id="topbar"><a href="/mirror/index.html">NewsHub</a> — all the news in one place</div>
<nav class="menu"><ul><li><a href="/mirror/index.html">Top stories</a></li><li><a href="/mirror/index.html">World</a></li><li><a href="/mirror/index.html">Local</a></li><li><a href="/mirror/index.html">Tech</a></li><li><a href="/mirror/index.html">热点</a></li></ul></nav>
<aside class="sidebar"><div class="ad">Advertisement: Cheap flights to the islands — book now and save 30%!</div>
<div class="ad">广告：新款手机限时特惠，点击立即抢购</div></aside>"""
MIRROR_AD = '<div class="ad">Sponsored: Try our premium newsletter free for one month.</div>'
MIRROR_BOTTOM = """<section class="related"><h3>Related stories</h3><ul><li><a href="/mirror/index.html">Ten things to do this weekend</a></li><li><a href="/mirror/index.html">Weather: a warm week ahead</a></li><li><a href="/mirror/index.html">本周影视推荐</a></li></ul></section>
<footer>NewsHub aggregates stories from publishers around the region. © 2026 NewsHub Media.</footer>"""

REPOST_TOP = """<header><h2 class="blog-name">Ming's Notebook · 小明的笔记本</h2>
<nav><a href="/repost/index.html">Blog</a> | <a href="/repost/index.html">Archive</a> | <a href="/repost/index.html">About me</a></nav></header>"""
REPOST_BOTTOM = """<div class="share">Share: Twitter · Weibo · WeChat</div>
<div class="comments"><h3>3 comments</h3><p>Great read, thanks for sharing!</p></div>
<footer>Powered by a static site generator. © Ming 2026</footer>"""


def index(title: str, links: list) -> str:
    items = "\n".join(f'<li><a href="{href}">{html.escape(text)}</a></li>' for href, text in links)
    return page(title, title, "", f"<h1>{html.escape(title)}</h1>\n<ul>\n{items}\n</ul>", "", og=False)


SECTION_INTRO = ("Every story the Harbour Ledger has published about the harbour district: its streets, "
                 "its ferries and its markets, newest first.")
STORY_WORDS = ("quay market ferry council tide crane pier lantern warehouse fishers bridge tram harbour "
               "storm school festival bakery lighthouse orchard museum mayor budget strike sailors "
               "anchor cliff beach island rain winter summer garden library theatre concert "
               "station engine cargo customs wharf").split()


def section_page(number: int) -> str:
    """Archive page ``number`` of the harbour section: the heading and intro every page
    has, then twelve story links of its own."""
    links, pick = [], random.Random(number)
    for i in range(12):
        story = " ".join(pick.sample(STORY_WORDS, 4)).capitalize()
        links.append(f'<li><a href="/news/story-{number}-{i}.html">{html.escape(story)}</a></li>')
    body = (f"<main>\n<h1>Harbour district</h1>\n<p>{html.escape(SECTION_INTRO)}</p>\n<ul>\n"
            + "\n".join(links) + f"\n</ul>\n<p>Page {number} of 6</p>\n</main>")
    return page("Harbour district", "Harbour district – The Harbour Ledger", NEWS_TOP, body, NEWS_BOTTOM)


def main() -> None:
    for d in ("news", "mirror", "repost", "sections"):
        (SITE / d).mkdir(parents=True, exist_ok=True)
    manifest = {}
    news_links, mirror_links, repost_links = [], [], []
    for a in ARTICLES:
        slug, title = a["slug"], a["title"]
        original = f"/news/{slug}.html"
        (SITE / "news" / f"{slug}.html").write_text(
            page(title, f"{title} – The Harbour Ledger", NEWS_TOP, article_body(a, title), NEWS_BOTTOM),
            encoding="utf-8",
        )
        manifest[original] = {"role": "original"}
        news_links.append((original, title))

        (SITE / "mirror" / f"{slug}.html").write_text(
            page(title, f"{title} | NewsHub", MIRROR_TOP, article_body(a, title, inline_ad=MIRROR_AD), MIRROR_BOTTOM, og=False),
            encoding="utf-8",
        )
        manifest[f"/mirror/{slug}.html"] = {"role": "exact", "of": original}
        mirror_links.append((f"/mirror/{slug}.html", title))

        if slug in REPOSTS:
            new_title = REPOSTS[slug]
            credit = f'<p class="credit">{html.escape(ATTRIBUTION[a["lang"]])}</p>'
            (SITE / "repost" / f"{slug}.html").write_text(
                page(new_title, f"{new_title} - Ming's Notebook", REPOST_TOP, article_body(a, new_title, extra_top=credit), REPOST_BOTTOM),
                encoding="utf-8",
            )
            manifest[f"/repost/{slug}.html"] = {"role": "near", "of": original}
            repost_links.append((f"/repost/{slug}.html", new_title))
        if slug in TRACKED:
            tracked = f"{original}?utm_source=newshub&utm_medium=referral"
            manifest[tracked] = {"role": "exact", "of": original}
            mirror_links.append((tracked, f"{title} (at the publisher)"))

    (SITE / "news" / "index.html").write_text(index("The Harbour Ledger — latest", news_links), encoding="utf-8")
    (SITE / "mirror" / "index.html").write_text(index("NewsHub — top stories", mirror_links), encoding="utf-8")
    (SITE / "repost" / "index.html").write_text(index("Ming's Notebook — reposts", repost_links), encoding="utf-8")
    section_links = []
    for number in range(1, 7):
        (SITE / "sections" / f"harbour-{number}.html").write_text(section_page(number), encoding="utf-8")
        manifest[f"/sections/harbour-{number}.html"] = {"role": "listing"}
        section_links.append((f"/sections/harbour-{number}.html", f"Harbour district, page {number}"))
    (SITE / "sections" / "index.html").write_text(index("The Harbour Ledger — sections", section_links),
                                                  encoding="utf-8")
    (SITE / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
