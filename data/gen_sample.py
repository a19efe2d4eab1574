#!/usr/bin/env python3
"""Generate data/sample.jsonl: a synthetic, project-written bilingual corpus of
base news-style articles plus near-duplicate web variants (for simstore tests).

Deterministic (fixed seed), standard library only.  Usage: python3 data/gen_sample.py
All text is produced from templates written for this project; no external data.
A larger corpus: N_BASE=1000 python3 data/gen_sample.py /tmp/big.jsonl (N_BASE bases per
language, default 50; the output path defaults to data/sample.jsonl).
"""
import json
import os
import random
import re
import sys
from collections import Counter
from datetime import datetime, timedelta

SEED = int(os.environ.get("SEED", "20260305"))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample.jsonl")
N_BASE = int(os.environ.get("N_BASE", "50"))  # per language
# Variants per base (per language): 14 bases with none, 2 with one, 4 with two, 30 with three
# (for N_BASE > 50, the plan repeated).
VARIANT_PLAN = [0] * 14 + [1] * 2 + [2] * 4 + [3] * 30
CHANGE_WEIGHTS = {"title": 3, "boilerplate": 3, "timestamp": 3, "source": 3, "tiny_edit": 0.5}

# ----------------------------------------------------------------- slot pools
def L(s):
    return s.split("|")


EN = {
    "first": L("Emma|Liam|Olivia|Noah|Ava|Ethan|Mia|Lucas|Grace|Owen|Chloe|Samuel|Ruby|Daniel|Hannah|Isaac|Leah|Caleb|Nora|Julian|Priya|Mateo|Aisha|Tomas|Ingrid|Kenji|Fatima|Marco|Elena|Arjun"),
    "last": L("Walsh|Okafor|Brennan|Lindqvist|Moreau|Castillo|Hughes|Nakamura|Patel|Fischer|Doyle|Harper|Novak|Reyes|"
              "Sinclair|Abbott|Kowalski|Fraser|Mendes|Whitaker|Osei|Larsen|Quinn|Delgado|Thornton|Byrne|Haddad|Keller|Ashworth|Vance"),
    "city": L("Portland|Denver|Leeds|Adelaide|Halifax|Tucson|Bristol|Galway|Wellington|Boise|Spokane|Duluth|Aberdeen|"
              "Hobart|Calgary|Norwich|Asheville|Savannah|Reno|Madison|Burlington|Cork|Dunedin|Exeter|Fresno|Geelong|Hamilton|Lancaster|Salem|Tacoma"),
    "district": L("Eastgate|Harbourside|Northgate|Old Town|Riverside|West End|Millbrook|Southfield|Kingsbury|Cedar Hill"),
    "street": L("Elm Street|Harbour Road|Mill Lane|Station Avenue|Orchard Way|Queen Street|Bridge Road|Canal Street|Park Avenue|Maple Drive"),
    "facility": L("public library|community pool|farmers market hall|bus depot|skate park|senior centre|fire station|recreation centre"),
    "company": L("Northwind Labs|Bluefin Systems|Lumen Dynamics|Harborline Analytics|Quillstone|Redfern Robotics|Tidewater Energy|Brightpath Software|Ironbark Networks|Kestrel Mobile"),
    "product": L("the Aurora 14 laptop|the Pulse Buds 3 earphones|the Nimbus e-reader|the Trek Go action "
                 "camera|the Vantage X phone|the Halo 2 portable speaker|the Summit 11 tablet|the Drift S robot vacuum|the Lumen Go projector|the Orbit smartwatch"),
    "mascot": L("Comets|Rovers|Falcons|Mariners|Foxes|Otters|Hawks|Pioneers"),
    "venue": L("{city} Arena|Riverside Stadium|Memorial Field|the Harbourfront Centre"),
    "dish": L("braised short ribs|lemon ricotta pancakes|miso-glazed salmon|roasted cauliflower soup|chickpea curry|"
              "mushroom risotto|sourdough focaccia|spicy peanut noodles|shakshuka|chicken and leek pie"),
    "ingredient": L("smoked paprika|fresh thyme|brown butter|sesame oil|preserved lemon|fish sauce|maple syrup|toasted fennel seeds|white miso|anchovy paste"),
    "dest": L("the Dolomites|the Scottish Highlands|Patagonia|the Amalfi Coast|Lisbon's old town|the Faroe Islands|Hokkaido|the Atacama Desert|Slovenia's lake country|the Oregon coast"),
    "org": L("the {city} Civic Council|the Regional Statistics Office|the Example Policy Institute|the {city} Community Foundation|the Northfield Research Group"),
    "finorg": L("Harbour Street Securities|Westmark Capital|Example Research Group|Ridgeway Advisors"),
    "index": L("the Westmark 500|the Example Composite|the Harbour 100 index"),
    "sector": L("bank stocks|chipmakers|airline shares|energy stocks|retailers|utilities|healthcare stocks"),
    "uni": L("{city} University|the University of {city}|{city} Institute of Technology"),
    "school": L("{city} Central High School|Westbrook Elementary|Lakeside Community College|{district} Middle School|St. Brigid's Academy"),
    "subject": L("robotics|creative writing|chemistry|music production|coding|financial literacy|marine science"),
    "sci": [L("marine biologists|a deep-sea fish that glows in two colours|how animals adapt to total darkness|deep-sea conservation plans"),
            L("palaeontologists|a well-preserved fossil of an early bird|how flight first evolved|the study of bird evolution"),
            L("microbiologists|a soil bacterium that breaks down thin plastic film|how plastic waste degrades|cleaner recycling methods"),
            L("astronomers|a faint dwarf galaxy close to the Milky Way|how the earliest galaxies formed|future telescope surveys"),
            L("materials scientists|a coating that repairs its own scratches|why materials crack under stress|longer-lasting paints and electronics"),
            L("ecologists|a steady return of wading birds to urban wetlands|how restored habitats recover|wetland restoration projects"),
            L("geologists|a previously unmapped fault beneath the valley|the region's small earthquakes|earthquake risk planning"),
            L("botanists|a wild rice strain that survives long droughts|how crops might cope with heat|efforts to breed hardier crops")],
    "wx": [L("heavy rain|rain"), L("a cold snap|cold weather"), L("strong winds|wind"), L("a heatwave|heat")],
    "weekday": L("Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"),
    "month": L("January|February|March|April|May|June|July|August|September|October|November|December"),
    "quarter": L("first|second|third|fourth"),
}
ZH = {
    "sur": list("张王李赵刘陈杨黄周吴徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹"),
    "given": L("伟|芳|娜|敏|静|磊|洋|勇|艳|杰|军|强|丽|明|涛|超|霞|平|刚|桂英|建华|志强|晓东|雨桐|子涵|欣怡|浩然|思远|海燕|文博|国栋|秀兰|俊杰|佳琪|宏伟|春梅|一鸣|若曦|振宇|立新"),
    "city": L("杭州|成都|武汉|西安|南京|苏州|长沙|青岛|厦门|昆明|重庆|天津|郑州|合肥|福州|济南|沈阳|大连|哈尔滨|南宁|贵阳|兰州|宁波|无锡|珠海|洛阳|扬州|温州|烟台|桂林"),
    "district": L("城东区|高新区|滨江新区|老城区|经开区|南湖区|北山区|西城区|江北区|临港新区"),
    "street": L("人民路|解放路|建设大道|中山路|文化路|和平街|光明路|长江路|青年路|新华街|学府路"),
    "facility": L("社区图书馆|社区卫生服务中心|农贸市场|口袋公园|公共停车场|全民健身中心|老年活动中心|游泳馆"),
    "company": L("星河科技|蓝鲸智能|远航电子|云启数据|华晟新能源|北辰机器人|明川软件|卓越通信|启航汽车|青禾电器"),
    "product": L("星河X5手机|蓝鲸智能音箱Pro|远航14英寸笔记本|北辰扫地机器人T3|云启无线耳机Air2|青禾平板电脑Pad5|启航运动相机Go3|明川智能手表GT|卓越蓝牙音箱Mini|华晟便携储能电源"),
    "mascot": L("猎鹰|雄狮|海港|飞龙|猛虎|蓝鲸|金甲|骏马"),
    "venue": L("{city}体育中心|{city}奥体中心体育场|{city}市体育馆|{city}滨江体育公园"),
    "dish": L("红烧肉|糖醋排骨|麻婆豆腐|番茄炒蛋|酸菜鱼|宫保鸡丁|清蒸鲈鱼|葱油拌面|可乐鸡翅|干锅花菜|鱼香肉丝|土豆炖牛腩"),
    "ingredient": L("生抽|老抽|花椒|八角|冰糖|料酒|郫县豆瓣酱|蚝油|陈醋|香叶|白胡椒粉|黄豆酱"),
    "dest": L("大理古城|九寨沟|张家界|桂林漓江|丽江|黄山|西双版纳|鼓浪屿|稻城亚丁|乌镇|呼伦贝尔草原|敦煌"),
    "org": L("{city}市统计局|{city}社会科学院|晨曦经济研究院|云帆咨询|{city}大学公共政策研究中心"),
    "finorg": L("晨曦证券|云帆基金|远景资本研究所|示例财经研究院"),
    "sector": L("新能源板块|半导体板块|银行股|白酒板块|医药板块|券商股|消费电子板块|军工板块"),
    "uni": L("{city}大学|{city}理工大学|{city}师范大学|{city}农业大学"),
    "school": L("{city}第{cn}中学|{city}实验小学|{city}外国语学校|{city}育才中学|{district}第{cn}小学"),
    "subject": L("编程|机器人|物理|科学|英语|美术|数学|书法"),
    "sci": [L("海洋生物学|一种能发出两种颜色荧光的深海鱼|深海生物如何适应黑暗环境|深海生态保护"),
            L("古生物学|一件保存完好的早期鸟类化石|鸟类飞行能力的早期演化|鸟类演化研究"),
            L("微生物学|一种能够分解塑料薄膜的土壤细菌|塑料垃圾在自然界中的降解途径|塑料回收技术"),
            L("天文学|一个距离银河系很近的暗弱矮星系|早期星系的形成过程|未来的巡天观测"),
            L("材料科学|一种能够自我修复划痕的新型涂层|材料在反复受力下开裂的原因|更耐用的涂料和电子产品"),
            L("生态学|城市湿地中涉禽数量稳步回升的现象|生态修复后栖息地的恢复规律|湿地修复工程"),
            L("地质学|一条此前从未被记录的隐伏断层|当地小规模地震频发的原因|地震风险评估"),
            L("植物学|一种耐旱能力极强的野生稻|农作物如何应对夏季高温干旱|培育抗旱作物")],
    "wx": [L("强降雨|暴雨"), L("寒潮|寒潮"), L("大风|大风"), L("高温|高温")],
    "weekday": L("周一|周二|周三|周四|周五|周六|周日"),
    "cn": L("一|二|三|四|五|六|七|八|九|十|十一|十二|十四|十五"),
}

# ----------------------------------------------------------------- templates
# [a|b|c] = pick one alternative; {slot} = value from the article context or fresh numbers.
# A leading <tags> limits a sentence: k0..k3 = weather kind (rain, cold, wind, heat);
# C/B/F = topic family (civic news, general news, features) for the generic sentences.
T = {"en": {}, "zh": {}}
T["en"]["weather"] = dict(titles=["{wx} [expected|forecast] across {city} [this week|through the weekend|into {weekday}]",
    "{city} braces for {wx} [on {weekday}|this weekend|as the week begins]",
    "Weather service issues {wxw} [advisory|warning|alert] for {city} and {city2}"], leads=[
    "Residents of {city} [should prepare for|are being told to expect] {wx} [starting {weekday}|later this week|over the coming days], according to the latest forecast from the regional weather service.",
    "[A slow-moving|A powerful|An unusually persistent] weather system [is pushing|has moved] into {city}, bringing {wx} to [parts of the region|the coast and the hills|most of the county].",
    "Forecasters in {city} [issued|upgraded] [a yellow|an amber|an orange] {wxw} [warning|advisory] on {weekday} morning as [conditions changed quickly|the barometer fell|the outlook worsened] along the coast."], body=[
    "Daytime highs are [expected|forecast] to reach {hi} degrees, while overnight lows [could dip|may fall] to {lo} degrees in [outlying|rural|low-lying] areas.",
    "Meteorologist {expert} said the pattern was [typical|unusual] for {month}, [noting|adding] that [a similar system|the last comparable event] [hit the region|passed through] in {year}.",
    "Commuters [were advised|have been urged] to allow [extra time|an additional {n2} minutes] for travel on {street} and other [major|busy] routes.",
    "<k0,k1,k2>[The city's public works crews|Road maintenance teams] [have put|are keeping] {n} [emergency crews|repair teams] on standby in [exposed|hilly|low-lying] neighbourhoods.",
    "[Schools in the {district} area may close early|Several outdoor events could be postponed] if conditions [worsen|deteriorate] [after lunch|by the evening].",
    "<k0>Rainfall totals [at the airport|in the hills north of the city] [reached|topped] {rain} millimetres over {n} hours, [well above|nearly double] the {month} average.",
    "<k0>[Farmers near {city2}|Orchard owners in the valley] welcomed the moisture, saying the timing [could make or break|would shape] [this year's harvest|the spring planting season].",
    "<k1>Orchard owners near {city2} [worried about|are bracing for] frost damage, [warning|saying] that a [hard|late] frost [could ruin|would hurt] [the blossoms|early crops].",
    "The [latest|updated] outlook [suggests|indicates] [calmer|more settled] weather [returning|arriving] by {weekday2}, with [sunny spells|light breezes|clearer skies] [across most of the region|for the weekend].",
    "<k0,k2>[Power company crews|Utility workers] [restored electricity to|reconnected] about {big} households [after|following] [fallen branches|a lightning strike] [brought down|damaged] lines near {street}.",
    "<k1>[Shelters|Community halls] [added|opened] {n2} extra beds [for|to protect] [rough sleepers|people without heating] [as temperatures fall|during the cold spell].",
    "<k2>Ferry services [to the islands|across the harbour] were [suspended|cancelled] [for the afternoon|until further notice] as gusts [reached|topped] {wind} km/h.",
    "<k3>[Cooling centres|Public libraries] [will stay open|are opening] [late|until 10 p.m.] [for|to help] [older residents|people without air conditioning], [officials said|the city announced].",
    "<k3>[Health officials|Doctors] [urged|reminded] residents to [drink plenty of water|check on elderly neighbours|avoid strenuous exercise] [during the hottest hours|between noon and 4 p.m.]."])
T["en"]["sports"] = dict(titles=["{team} [edge|beat|stun|outlast] {team2} {s1}-{s2} [in a tense finish|at home|in front of a full house]",
    "{athlete} [inspires|powers|carries] {team} past {team2}",
    "[Late goal|Second-half surge|Defensive stand] [lifts|sends] {team} [into the semifinals|to a fourth straight win|back to the top of the table]"], leads=[
    "{team} [defeated|beat|got past] {team2} {s1}-{s2} on {weekday} night [in front of|before] {big} fans at {venue}.",
    "[It took|It needed] [a late goal|a second-half header|an extra-time winner] from {athlete}, but {team} [finally|eventually] [broke through|held on] against {team2}, winning {s1}-{s2}.",
    "{team} [extended their unbeaten run to|made it] {n} [games|matches] [with|after] a {s1}-{s2} victory over {team2} at {venue} on {weekday}."], body=[
    "{athlete} [scored twice|scored once and set up another|hit the post before scoring], [the best|one of the best] [performances|outings] of [the season|a long career].",
    "Coach {coach} [praised|credited] the [defence|bench|young midfield], saying the team [had worked all week on|had focused on] [set pieces|quick passing|closing out games].",
    "{team2} [led|were ahead] at halftime [after|thanks to] [an early penalty|a quick counterattack|a strong opening spell], but [could not keep up|faded] in the [second half|closing minutes].",
    "[The turning point came|Momentum shifted] at the {mm}-minute mark, when {athlete} [intercepted a pass|stole the ball|won a free kick] near [midfield|the touchline].",
    "[Injuries have piled up|Fatigue remains a concern] for {team2}, who [were without|played without] {n} [regular starters|first-choice players] [for the third week running|after a busy schedule].",
    "Attendance at {venue} [has risen|is up] {pct} percent [this season|compared with last year], [a sign|evidence] that [local interest|the rebuild] is [paying off|gaining traction].",
    "[Next up|Up next], {team} [travel to|host] {city2} on {weekday2} [for a rematch|in what could be a preview of the final|before a short break].",
    "\"[We stayed patient|Nobody panicked|The group never stopped believing],\" {athlete} said [after the game|in the dressing room|to reporters]. \"[That's what good teams do|We knew our chance would come|Credit to the fans tonight].\"",
    "[Ticket prices|Season pass sales] [for the rest of the season|for the playoffs] [will be announced|are expected to open] [in {month}|next week], the club said.",
    "[Goalkeeper|Keeper] {person3} [made|pulled off] {n} [saves|important stops], including [a diving stop|a reflex save] [in stoppage time|from close range] that kept {team} in front.",
    "The [win|result] [moves|lifts] {team} [into second place|into the top four|three points clear at the top] with {n} games [left|remaining] [before the break|in the regular season].",
    "[The referee|The officials] came under [scrutiny|criticism] [for|after] [a disputed penalty|a goal ruled out for offside|a red card] [just before halftime|early in the second half|in stoppage time]."])
T["en"]["technology"] = dict(titles=["{company} [unveils|launches|announces] {product} [with longer battery life|aimed at small businesses|starting at {price}]",
    "{company} [bets on|pins its hopes on] {product} [to win back customers|as competition heats up|for the holiday season]",
    "{company} [to ship|will start selling] {product} [next month|in the spring|before the summer]"], leads=[
    "{company} on {weekday} [introduced|unveiled|showed off] {product}, which the company says [cuts energy use by {pct} percent|can be set up in under {n} minutes|works fully offline].",
    "[Software maker|Tech firm|Hardware startup] {company} [took the wraps off|announced] {product} at [an event|a launch event|a press briefing] in {city} on {weekday}, [its first new product|its biggest launch] [in {n} years|since {year}].",
    "{company} [is betting|hopes] that {product}, [unveiled|announced] on {weekday}, [will help it|can help it] [win back customers|grow beyond its home market|compete with larger rivals]."], body=[
    "Chief technology officer {expert} said the [new|updated] [chip|software|design] [was built|had been developed] [in house|over {n} years] [with a team of {n2} people|alongside university partners].",
    "[Early reviewers|Beta testers] [praised|liked] [the interface|the speed|the battery life], [though|but] [some|several] [questioned|criticised] [the price|the lack of ports|the privacy settings].",
    "[Analysts|Industry watchers] at {finorg} [estimate|believe] the [market|segment] for [smart devices|portable electronics|consumer gadgets] [will grow|could expand] {pct} percent [a year|annually] through {yearn}.",
    "[Pricing|The base model] [starts at|will cost] {price}, and [shipments|deliveries|pre-orders] [begin|open] in {month}.",
    "[Privacy advocates|Consumer groups] [raised concerns|asked questions] about how [user data|voice recordings|location information] [would be stored|might be shared with third parties].",
    "{company} [shares|stock] [rose|climbed|slipped] {pct2} percent in [afternoon|early] trading [after the announcement|following the news].",
    "The device weighs {weight} grams and [is available in|ships in] [three colours|two sizes|black and silver], [with|and] a [larger|pro] model [due|expected] in {month}.",
    "[Production|Manufacturing] [will take place|is handled] at a [partner factory|plant] [near|in] {city2}, [where|and] the company [employs|has hired] [about|more than] {n2}0 people.",
    "[Environmental groups|Sustainability advocates] [noted|welcomed] that the [packaging|casing] [uses|is made from] {pct} percent recycled [material|plastic], but [asked|called] for [longer software support|a repair program].",
    "[A software update|A companion app] [released alongside|launched with] the [device|product] [adds|brings] [offline maps|family sharing|energy reports], [the company said|according to {company}].",
    "The [launch|announcement] [comes as|arrives as] {company} [faces|deals with] [growing competition|slower sales|pressure from investors] [in its core business|after a difficult year]."])
T["en"]["cooking"] = dict(titles=["[How to make|Recipe:|Weeknight win:] {dish} [in under {n2} minutes|with {ingredient}|the easy way]",
    "[The secret to|The key to] [perfect|better] {dish} [starts with|is] {ingredient}",
    "{chef}'s [go-to|family] {dish} [is the comfort food we need|will feed a crowd]"], leads=[
    "[Few dishes say comfort like|Not many recipes feel as welcoming as] {dish}, and this version [from|by] chef {chef} [adds|leans on] {ingredient} for [extra depth|a bright finish].",
    "[When the evenings turn cold|On busy weeknights|For a relaxed weekend lunch], {chef} [reaches for|turns to] {dish}, a recipe picked up [from a neighbour in {city}|at a market stall in {city2}].",
    "This {dish} [takes about|needs roughly] {n2} minutes [from start to finish|of hands-on time] and [serves|feeds] {n} people [generously|with leftovers]."], body=[
    "[Buy|Look for] the [freshest|best] [produce|ingredients] you can [afford|find]; {chef} [shops|buys] at [a Saturday market|a small grocer] in {city} [every week|most mornings].",
    "Start by [heating|warming] {n} tablespoons of oil in a [heavy pan|deep skillet|cast-iron pot] over medium heat until it [shimmers|just begins to smoke].",
    "[Season|Sprinkle] [generously|lightly] with salt, then add {ingredient} and [stir|cook] for {n} minutes until [fragrant|golden].",
    "[Don't rush this step|Patience matters here]: [letting the onions caramelise|letting the sauce reduce|allowing the garlic to soften] [slowly|gently] [builds|creates] [most of the flavour|the backbone of the dish].",
    "[If you cannot find|As a substitute for] {ingredient}, {chef} [suggests|recommends] [a little {ingredient2}|{ingredient2}] [instead|which works almost as well].",
    "[Bake|Roast] at {oven} degrees Celsius [for|for about] {n2} minutes, [turning once|rotating the tray halfway through], until the edges are [crisp|browned].",
    "[Leftovers|Any extra portions] [keep|will last] [for|up to] {n} days in the fridge and [reheat well|taste even better the next day].",
    "[Serve|Plate it] with [steamed rice|crusty bread|a green salad|roasted potatoes] and [a squeeze of lemon|a handful of fresh herbs|a spoonful of yogurt].",
    "{chef}, who [runs a small restaurant|teaches cooking classes] in {city}, [says|insists] the [real trick|key] is [tasting as you go|using a hot pan|resting the dish before serving].",
    "[One serving|Each portion] [contains|has] [roughly|about] {cal} calories and {n2} grams of protein, [according to|based on] the [recipe's|author's] [estimate|calculation]."])
T["en"]["travel"] = dict(titles=["[A long weekend|Three days|Five slow days] in {dest}: [what to see|where to stay|what to skip]",
    "[Record crowds for|Visitors flock back to] {dest} [after a quiet winter|as a new rail link opens]",
    "[Hiking|Eating|Wandering] [through|across] {dest} [on a budget|with kids|in the off season]"], leads=[
    "[Getting to|Reaching] {dest} [used to take|once required] [a full day|two connecting flights], but a new [rail link|ferry service|direct flight] from {city} has [cut the journey to|reduced the trip to] {n} hours.",
    "[Early morning is the best time to explore {dest}, before the tour buses arrive|Late afternoon is the quietest hour to visit {dest}, after the day-trippers leave].",
    "[Tourism officials|Local guides] [in|around] {dest} [report|say] visitor numbers [rose|grew] {pct} percent [last year|in {yearp}], [putting pressure on|straining] [small villages|narrow roads|local housing]."], body=[
    "[Double rooms|Guesthouse rooms] [in the old quarter|near the harbour] [start at|cost from] {price2}0 a night, [breakfast included|with discounts for longer stays].",
    "[The trail|The coastal path] [climbs|winds up] {n2}0 metres [over|across] {n} kilometres and [takes|needs] [most walkers|an average hiker] [about|roughly] {n} hours.",
    "[Book ahead|Reserve early] [for|in] {month}, when [festivals pack|school holidays fill|the harvest season fills] [hotels|restaurants] [across the area|in town].",
    "[Guide|Local host] {guide} [recommends|suggests] [skipping|avoiding] the [main square|busiest viewpoints] at noon and [heading|walking] instead to [a quieter cove|the hillside cemetery|the covered market].",
    "[Buses|Shuttles] [run|leave] every {n2} minutes [from the station|from the ferry terminal], and a day pass costs {price2}.",
    "[Do not leave without trying|Be sure to try|The must-eat dish is] [the local flatbread|grilled river fish|a slice of walnut cake], [usually|traditionally] [served|eaten] with [strong coffee|a glass of cider|pickled vegetables].",
    "[Visitors|Travellers] [should|are asked to] [carry cash, since card machines can be unreliable|bring layers, since the weather changes quickly|wear sturdy shoes, since the paths can be slippery].",
    "[Some residents|Local shop owners] [welcome|worry about] the [growth|extra visitors], [noting|saying] that [rents have risen|the season now lasts longer|parking is scarce].",
    "[A new visitor fee|A tourist levy] of {price2} per [night|person] [takes effect|comes into force] in {month}, [with the money going to|to help pay for] [trail repairs|waste collection|public toilets].",
    "[Beyond|Away from] the [main sights|famous viewpoints], the [surrounding villages|side valleys] [reward|repay] [a half-day detour|an unhurried afternoon], with [fewer crowds|quiet lanes] and [family-run cafes|small galleries]."])
T["en"]["finance"] = dict(titles=["[Stocks|Markets|Shares] {edge} as [investors weigh|traders digest] [inflation data|rate signals|earnings]",
    "{company} results {liftw} [markets|stocks] as {sector} {rally}",
    "[Markets|Stocks] [close|end] {updown} [ahead of|after] [the central bank meeting|jobs data|a holiday weekend]"], leads=[
    "{index} [closed|ended the day] {pct2} percent {updown} on {weekday}, {ledby} in {sector}.",
    "{company} [reported|posted] {quarter}-quarter revenue of {bill} billion, {abovebelow} the {bill2} billion that analysts had [expected|forecast], [moving|jolting] {sector} [in early trading|across the board].",
    "[Investors|Traders] [turned cautious|bought back in] on {weekday} [as|after] [fresh inflation figures|comments from central bank officials|a batch of earnings reports] [shifted|lifted|dampened] [expectations|sentiment], with {sector} [moving the most|leading the moves]."], body=[
    "[Bond yields|Government bond yields] [rose|fell|were little changed], with the [two|five|ten]-year yield [ending|settling] at {rate} percent.",
    "[Economist|Strategist] {expert} [at|with] {finorg} said [investors|markets] were [waiting for|focused on] [next week's jobs report|the central bank's meeting|retail sales figures].",
    "{sector} {sectmove} {pct2} percent as a group, the {strongweak} showing in over {n} [weeks|months].",
    "{company} [raised its full-year outlook, citing strong demand|cut its annual guidance, pointing to higher costs|kept its outlook unchanged despite a weaker currency].",
    "Oil [rose|fell] {pct2} percent to {oilp} a barrel, while gold [edged up|slipped] to {goldp} an ounce.",
    "[Trading volume|Turnover] was [lighter|heavier] than usual, with [about|roughly] {bill3} billion shares [changing hands|traded] [across all exchanges|on the main board].",
    "[Small investors|Retail traders] have [poured|put] [money|savings] into [index funds|dividend stocks|short-term bonds] [this year|since {month}], [data from|figures by] {finorg} [show|suggest].",
    "[Despite|Even with] the [volatility|recent swings], {expert} [said|argued] that [long-term investors|most households] [should|would do well to] [stay the course|avoid reacting to daily moves].",
    "[The currency|The dollar] [strengthened|weakened] {pct2} percent [against a basket of major currencies|against the euro] [in late trading|by the close].",
    "[Separately|Elsewhere], [average 30-year mortgage rates|typical one-year deposit rates] [rose|fell] to {rate} percent [this week|in {month}], [according to {finorg}|data from {finorg} showed]."])
T["en"]["local"] = dict(titles=["{city} council [approves|delays|debates] [plan|funding] for [new|renovated] {facility}",
    "[Residents|Neighbours] [push back|rally] [over|for] [plans for|the future of] {street}",
    "[Roadworks|Construction] on {street} [to start|set to begin] [in {month}|this spring|next month]"], leads=[
    "The {city} city council [voted|decided] {votes} on {weekday} to [approve|set aside] {mill} million [for|to fund] a [new|renovated] {facility} [in|near] {district}.",
    "[More than|Nearly|About] {n2}0 residents [packed|filled] a [community hall|school gym] [on {weekday} evening|last night] to [debate|discuss|oppose] plans to [redesign|close part of] {street} [to make room for|as part of] a new {facility}.",
    "[Work|Construction] on a [new|long-awaited] {facility} [near|along] {street} in {district} [will begin|is set to start] [in {month}|next month], [city officials|the council] [confirmed|said] on {weekday}."], body=[
    "Council member {person2} said the {facility} [had been|was] [on the wish list|under discussion] [for|for almost] {n} years and [would serve|could serve] [thousands of families|the whole east side].",
    "[Construction|Work] [is expected to|could] [begin|start] in {month} and [take|last] [about|roughly] {n} months, [weather permitting|if permits are approved on time].",
    "[Some|Several] [shop owners|residents] on {street} [worry|fear] that [losing parking|months of roadworks] will [hurt business|drive away customers].",
    "[Planners|City engineers] [said|noted] the [site|old building] [dates from|was built in] {oldyear} and had been [closed|empty] for {n} years [before the plan|after failing inspections].",
    "[A petition|An online petition] [opposing|supporting] the [plan|change] has [gathered|collected] {big} signatures [so far|since {month}].",
    "The [city|council] will [hold|host] [a public hearing|an open house|two information sessions] [at the library|at city hall] on {weekday2} [at {evehr}:30 in the evening|after work hours].",
    "[Bus routes|Rubbish collection|School drop-offs] in {district} [will be|may be] [adjusted|delayed] [while|until] [the work is completed|the work finishes].",
    "[Police|Officials] [reminded|asked] drivers to [slow down|follow detour signs|avoid the area] [near|around] {street} [during peak hours|until further notice].",
    "[The budget|The project cost] [includes|covers] [new lighting|accessible entrances|solar panels] and [a small playground|bike parking|a community garden], according to [planning documents|the proposal].",
    "[Mature trees|Several old plane trees] along {street} [will be kept|are to be replaced with {n2} new ones], [a point|an issue] [raised|stressed] by [a local garden club|neighbours] [during consultations|at the hearing]."])
T["en"]["science"] = dict(titles=["[Researchers|Scientists] [describe|identify|report] {finding}",
    "[Study|New research] [suggests|finds] {finding} [could help explain|may shed light on] {why}",
    "{uni} team [reports|announces] [discovery of|evidence for] {finding}"], leads=[
    "[A team of|An international group of] {field} led by {expert} at {uni} [has described|reports] {finding} in a paper published [this week|on {weekday}] in [a peer-reviewed journal|the journal Example Science].",
    "{finding} [may|could] [help explain|shed light on] {why}, [according to|say] {field} at {uni}.",
    "[After|Following] {n} years of [fieldwork|observations|lab experiments], {field} at {uni} [say they have found|report] {finding}."], body=[
    "The [team|researchers] [collected|analysed] {big} [samples|images|measurements] [from|across] {n2} [sites|sessions|trials] [over|during] {n} [seasons|years].",
    "\"[We did not expect|Nobody expected|It was a genuine surprise] to see [this|such a clear signal],\" said {expert}, [the study's lead author|who led the work].",
    "[The findings|The results] [still need to be|must be] [replicated|confirmed] by [other groups|independent teams], [cautioned|noted] {expert2}, who was not involved in the study.",
    "[Funding|Support] for the [project|research] came from {org} and [a private foundation|a national science agency].",
    "[Previous studies|Earlier work] had [suggested|hinted at] [the effect|such a pattern], but [lacked|did not have] [the data|enough samples] to [confirm it|rule out chance].",
    "[Using|With] [new|custom-built] [instruments|equipment|analysis software], the team [measured|detected] [changes|signals] [as small as|of just] {pct2} percent.",
    "[Next|Later this year], the researchers [plan to|hope to] [repeat the work|expand the study] [at {n} more sites|with a larger sample|over a longer period].",
    "[The discovery|The result] [could|may eventually] [inform|help guide] {use}, {expert} said.",
    "[The paper|The study] [lists|includes] {n2} [co-authors|contributors] from {n} [countries|institutions] and is [freely available online|open access].",
    "[Graduate students|Doctoral students] on the team [took turns|worked in shifts] [in the field|processing data] for {n2} [weeks|months], [often|sometimes] [through the night|on weekends]."])
T["en"]["review"] = dict(titles=["{product} review: [solid but pricey|a smart upgrade|almost perfect|good enough for most people]",
    "[Hands-on|First look|Long-term test]: {product} [after|over] {n} weeks",
    "Is {product} [worth|worth buying at] {price}? [Our verdict|We tested it]"], leads=[
    "[I have been using|We spent] {n} weeks [with|testing] {product}, and [the short version|the bottom line] is that it [does most things well|is easy to recommend|falls just short of greatness].",
    "At {price}, {product} [sits|lands] [in the middle of|near the top of] [the market|its category], [promising|claiming] [better battery life|faster charging|a sharper screen] than [last year's model|its rivals].",
    "{product} [arrived|shows up] in a [compact|plastic-free|surprisingly large] box with [a short cable|a quick-start guide|a carrying pouch] and [little else|not much else]."], body=[
    "[Build quality|The finish] [feels|is] [solid|reassuring|a little plasticky], and at {weight} grams it [is easy to carry|sits comfortably in one hand|is heavier than it looks].",
    "[Battery life|Runtime] [in our tests|during testing] [averaged|came to] {n2} hours, [comfortably|slightly] [above|below] the [claimed|advertised] figure.",
    "The bundled charger [is rated at|delivers] {watt} watts and [fills|tops up] the battery in [about|roughly] {n}0 minutes.",
    "[Setup|Pairing] took [about|under] {n} minutes [with|through] the companion app, which [asks for more permissions than necessary|insists on creating an account].",
    "[My biggest complaint|The main drawback|One annoyance] is [the fan noise under load|the glossy finish that attracts fingerprints|the slow software updates].",
    "[Compared with|Next to] [its predecessor|the cheaper model|the competition], it [is noticeably|feels] [faster|quieter|more refined] [in everyday use|day to day].",
    "The warranty [covers|lasts] [one year|two years|three years], [which is|and that is] [generous|standard|a bit short] for [this category|the price].",
    "[Score|Rating]: {score} out of 10. [Recommended for|Best suited to] [students|small apartments|frequent travellers|people upgrading from an older model].",
    "[A firmware update|A software patch] [released|pushed] in {month} [fixed|improved] [the connection drops|the brightness controls|the battery reporting] [we noticed early on|seen in early units].",
    "[If you can wait|For bargain hunters], [prices|discounts] [often drop|usually dip] [by|around] {pct} percent [during seasonal sales|a few months after launch]."])
T["en"]["education"] = dict(titles=["{school} [launches|expands|pilots] {subject} program [for younger students|with local partners]",
    "[After-school|Weekend] {subject} [classes|club] at {school} [draws|attracts] [record numbers|a long waiting list]",
    "{school} [bets on|invests in] {subject} [to keep students engaged|as interest grows]"], leads=[
    "Starting in {month}, students at {school} [will be able to|can] join a [new|free] {subject} [program|class] [after school|during lunch], [funded by|supported by] {org}.",
    "[More than|Nearly] {n2}0 students have [signed up|applied] for a new {subject} [club|program] at {school}, and staff say [demand|interest] has [surprised them|outpaced expectations].",
    "{school} [will expand|is expanding] its {subject} [program|classes] to [younger pupils|all year groups] [next term|from {month}], [after|following] [a successful pilot|strong results] [last year|in {yearp}]."], body=[
    "Principal {person2} said [interest|demand] had [grown|doubled] over the past {n} years, with [waiting lists|sign-up sheets] [filling|full] [within days|on the first morning].",
    "[Teachers|Staff] [received|completed] {n2} hours of [training|workshops] [over the summer|before the program began], [paid for|covered] by a [state|local] grant.",
    "[Parents|Some parents] [welcomed|questioned] the [program|timetable], [saying|arguing] it [would|could] [affect|complicate] [family schedules|bus routes|after-school jobs].",
    "Studies [cited|shared] by the school [suggest|indicate] that hands-on {subject} [projects|lessons] [improve|boost] [attendance|confidence|overall grades].",
    "[The program|The class] [currently|already] [serves|enrols] {n2}0 students, [about|roughly] {pct} percent of whom [had never|have not] [taken|tried] {subject} before.",
    "[Graduates|Former participants] [have gone on|went on] to [study engineering|win scholarships|start small businesses], [according to|said] {person2}.",
    "\"[The kids|Our students] [surprised us|worked incredibly hard],\" said teacher {person3}, whose students [placed second|finished third] at [a regional|the national] {subject} [competition|contest] [last {month}|this year].",
    "[The school|The district] [estimates|expects] the [program|expansion] [will cost|to cost] [about|roughly] {money} [a year|in its first year].",
    "[Families|Parents] can [share feedback|comment] [through|via] an online survey [until|before] [the end of {month}|{weekday2}].",
    "[Sessions|Classes] [run|take place] [twice a week|every weekday afternoon] in the school's [library|science lab|old gym], with [equipment|laptops] [donated|lent] by {company}."])
GEN = {"en": dict(mid=[
    "<C>\"[We are|I'm] [keeping a close eye on|monitoring] the situation [hour by hour|day by day],\" said {official}, [a city spokesperson|a spokesperson for the council|who coordinates the city's response], [in a statement|at a briefing|on {weekday2}].",
    "<C>Local resident {resident} [told reporters|said] that the [news|story] had been [the talk of the neighbourhood|a common topic at the school gate|discussed at length in local chat groups] [all week|since {weekday2}].",
    "<C,B>[According to|Based on] figures [shared|published] by {org}, [about|roughly|nearly] {pct} percent of [respondents|readers|households] said they [follow such news closely|had heard about it beforehand|expected something similar].",
    "<C>[Similar|Comparable] [efforts|stories] [have been reported|made news] in {city2} [earlier this year|last {month}|in {year}], [though on a smaller scale|with mixed results].",
    "<C,B>{analyst}, who has [followed|covered] [the field|this beat] for {n2} years, [described the news as|called the development] [\"overdue\"|\"a step in the right direction\"|\"hard to predict\"|\"significant\"].",
    "<C,B,F>[Not everyone is convinced|Reaction has been mixed]: [a local blogger|one longtime observer], {person4}, [argued|wrote] that [the numbers|the details] [deserve a closer look|tell only part of the story].",
    "<C>The [issue|topic] [came up|was raised] [again|repeatedly] at [a recent town hall|last month's council meeting|a community forum] in {city}, where [speakers|attendees] [asked for|called for] [clearer information|more transparency|faster action].",
    "<C,B,F>[Data|Figures] [compiled|gathered] by {org} [show|suggest] that [interest|participation|demand] has [grown|risen] [steadily|sharply] since {yearp}, with [younger people|families with children|retirees] [leading the way|making up the largest share].",
    "<C,B,F>[Online|On social media], [reactions|comments] ranged from [enthusiasm|cautious optimism] to [scepticism|frustration], with [one post|a widely shared thread] [drawing|attracting] more than {big} [replies|shares].",
    "<C,B>[Experts|Observers] [caution|warn] that [one week of|a single set of] [numbers|results] [does not make a trend|should not be over-interpreted], and [say|suggest] the picture [will be clearer|should become clearer] by {month}.",
    "<C>[A spokesperson for|A representative of] {org} [said|confirmed] the [group|organisation] [would|planned to] [publish|release] [a fuller analysis|its own figures] [before the end of {month}|in the next few weeks].",
    "<C>[Back in|In] {year}, [a similar|a related] [proposal|episode] [drew|attracted] [criticism|attention] [for|over] [its cost|poor communication|the short notice given to the public].",
    "<F>[Readers|Several readers] who [tried|tested] [it|the idea] at home [wrote in to say|told us] that [it worked better than expected|the result was worth the effort|they would do it again].",
    "<F>[We|Our team] [paid for|bought] [everything|the items] ourselves, and no [brand|company] [reviewed|saw] this [article|piece] before publication.",
    "<F>[Prices|Availability] can vary [by region|between shops], so [compare|check] [a few|several] [retailers|sellers] before [buying|you buy].",
    "<B>The [news|development] [drew|attracted] [attention|interest] well beyond {city}, with [coverage|discussion] in [several national outlets|specialist forums|regional newspapers] [by {weekday2}|within a day].",
    "<B,F>[For readers|For anyone] [new to|unfamiliar with] the [subject|topic], [a short explainer|a background guide] [is available|has been published] [alongside this article|on our website]."], end=[
    "<C,B>[More details are expected|A full report is expected|Further updates will be published] [later this week|on {weekday2}|in the coming days].",
    "<C,B>[Officials|Organisers|Spokespeople] did not [immediately respond to|return] [requests for comment|calls seeking further details] [on {weekday2}|by press time].",
    "<C,B>[For now|In the meantime], [residents|readers|visitors] [can find|are encouraged to check] [updates|more information] on the [official|organisers'] website.",
    "<C,B>[This story|This report] was updated at {hour}:{minute} with [additional|new] [comments|figures] from {person2}.",
    "<F>[What do you think|Have you tried it]? [Let us know|Tell us] [in the comments|by email].", "<F>Prices [were|are] correct at the time of [writing|publication] [and may change|but may vary by retailer]."]),
    "zh": dict(mid=[
    "<C>“[我们会|我们将][密切关注|持续跟踪][事态|后续][进展|变化]，[及时|第一时间]向社会公布[信息|情况]。”[相关部门负责人|市政府新闻发言人]{official}[在接受采访时|在{weekday2}的通报会上]说。", "<C>家住{district}的{resident}[告诉记者|说]，[这几天|本周以来]，[小区里|街坊邻居之间][谈论最多的|聊得最多的]就是这件事。",
    "<C,B>[据|根据]{org}[发布|公布]的数据，约{pct}%的[受访者|市民|读者][表示平时会关注此类消息|事先已经听说过此事|对此并不感到意外]。", "<C>[去年|{yearp}年]，{city2}也曾出现[类似情况|相似的事件]，[但规模较小|当时的应对效果不一]。",
    "<C,B>{analyst}[从事|关注][相关领域|这一行业]已有{n2}年，[在其看来|据其观察]，这一[变化|进展][来得正是时候|值得肯定|还需要时间检验]。", "<C,B,F>[也有|不过也有][网友|读者]{person4}[在社交平台上|在留言中][表示|提出]，[一些说法|部分细节][还有待商榷|值得进一步核实]。",
    "<C>[这一话题|此事][近期|最近][在{city}|在当地][引发|受到][广泛|不少]关注，在[社区座谈会|网络论坛|居民微信群]上，[不少人|许多参与者][呼吁|希望][信息更加公开|尽快拿出方案|多听听一线意见]。", "<C,B,F>{org}[整理|汇总]的数据显示，自{yearp}年以来，[相关需求|关注度][稳步|明显][上升|增长]，其中[年轻人|有孩子的家庭|退休人员][占比最高|增长最快]。",
    "<C,B,F>[在社交媒体上|网络上]，[网友|大家]的[看法|反应][不一|各异]，[有人|有的人][表示期待|持乐观态度]，也有人[持怀疑态度|觉得不满]，[一条相关帖子|相关话题]的[转发|评论]量超过{big}次。", "<C,B>[有专家|业内人士][提醒|指出]，[一周的数据|单次结果][并不能说明趋势|不宜过度解读]，[真实情况|整体走势]要到{month}前后才会[更加清晰|逐渐明朗]。",
    "<C>{org}[相关负责人|工作人员][表示|透露]，[将在|计划于]{month}[底前|之前][发布|公布][更完整的分析报告|相关统计数据]。", "<C>早在{year}年，[当地|{city}][也曾有过|就出现过][类似的情况|相关的讨论]，但[因应对不及时|因信息发布不及时|因准备不足]而[饱受争议|引发批评]。",
    "<F>不少读者在留言中分享了[自己的体验|亲身感受]，[有人说|读者{resident}说]“[比想象中简单|效果超出预期|确实物有所值]”。", "<F>本文[涉及的|中提到的]{buyobj}均为[编辑部自费购买|作者自行购买]，不涉及任何[商业合作|品牌赞助]。",
    "<F>[各地价格|不同渠道的价格]可能[有所差异|存在差别]，[建议|购买前最好][多比较几家|货比三家]。", "<B>这一消息[在{city}以外也|不只在{city}]引起了关注，[多家全国性媒体|不少专业论坛][进行了报道|展开了讨论]。", "<B,F>对这一[话题|领域]不太了解的读者，可以[阅读|参考]本文[附带的|后面的][背景资料|名词解释]。"], end=[
    "<C,B>[更多细节|后续情况|完整报告]预计将[在本周晚些时候|于{weekday2}|在近期]公布。", "<C,B>截至发稿时，[相关部门|主办方|有关方面][尚未|暂未]对此[作出回应|发表评论]。", "<C,B>[目前|眼下]，[市民|读者|游客]可[通过|登录]官方网站或[微信公众号|政务App]查询[最新进展|更多信息]。", "<C,B>[本报记者|记者]将[持续关注|继续跟踪][此事|后续进展]。（记者 {reporter}）",
    "<F>[你有什么看法|你怎么看]？欢迎在评论区[留言|分享你的经验]。", "<F>文中价格[为发稿时的价格|以发稿时为准]，[仅供参考|实际以商家页面为准]。"])}
T["zh"]["weather"] = dict(titles=["{wx}来袭，{city}[本周|未来三天|周末]天气[有变|提醒]", "{city}市气象台发布{wxw}[蓝色|黄色|橙色]预警", "[受{wx}影响|{wx}天气持续]，{city}市民[出行|生活]请注意"], leads=[
    "据{city}市气象台[消息|最新预报]，[本周|{weekday}起]全市将迎来[一次|新一轮]{wx}天气过程，[持续时间较长|影响范围较广|强度较往年偏强]。", "[今天早上|昨天夜里|{weekday}凌晨]，{city}[多地|城区及周边]出现{wx}天气，[部分路段通行受到影响|不少市民的出行计划被打乱]。",
    "{city}市气象台于{weekday}{hour}时[发布|升级]了{wxw}预警信号，提醒市民[做好防范|合理安排出行]。"], body=[
    "预计[白天|未来两天]最高气温{hi}℃，[夜间|早晚]最低气温{lo}℃，[昼夜温差较大|请注意适时增减衣物]。", "气象专家{expert}[表示|介绍]，这种天气在{month}[并不罕见|比较少见]，上一次类似过程[出现在|发生在]{year}年。",
    "[交通部门|交警部门]提醒，{street}等[主干道|高架路段]可能出现[拥堵|车辆排队|临时管制]，[建议|请]市民[提前出门|错峰出行|绿色出行]。", "<k0,k1,k2>市政部门[已在|提前在]{district}等[重点区域|易受影响的路段]安排了{n}支[抢险队伍|应急小分队]，[24小时待命|随时准备处置突发情况]。",
    "[部分中小学|一些户外活动]可能[调整作息|延期举行]，具体安排以[学校|主办方]通知为准。", "<k0>截至{hour}时，[城区|全市]累计降雨量已达{rain}毫米，[比常年同期偏多|接近常年同期的两倍]。",
    "<k0>{city2}一带的[果农|菜农]表示，这场雨[来得正是时候|下得有点急]，[关系到|会影响][今年的收成|春耕进度]。", "<k1>{city2}一带的果农[担心|最怕]出现[霜冻|冻害]，[连夜|提前][给果树盖上了保温膜|在果园里熏烟防霜]。",
    "[根据|按照]最新预报，{weekday2}以后[天气转好|天气逐渐平稳|气温逐渐恢复正常]，[周末|下周初]以[晴到多云|多云]为主。", "<k0,k2>供电公司[连夜|紧急]组织抢修，[目前|截至发稿时]已为约{big}户居民恢复供电。",
    "<k3>全市开放了{n2}处[避暑纳凉点|清凉驿站]，[户外工作者|环卫工人]可以[免费|随时]进去[歇脚|喝水休息]。", "<k1>[救助站|社区]增设了{n2}张临时床位，[确保|帮助][流浪人员|困难群众][温暖过冬|安全度过寒潮]。",
    "<k2>[受大风影响|由于风力较大]，[往返海岛的轮渡|部分高速路段][暂时停航|实行临时交通管制]，最大阵风[达到|超过]{windb}级。", "<k3>[医生|疾控部门][提醒|建议]市民[多喝水|避免在正午时段外出|关注家中老人的身体状况]，[谨防|预防]中暑。"])
T["zh"]["sports"] = dict(titles=["{s1}比{s2}！{team}主场[力克|击败|险胜]{team2}", "{athlete}[梅开二度|打入制胜球|关键时刻建功]，{team}[取得{n}连胜|闯入半决赛|重回榜首]", "[补时阶段|最后一分钟|下半场]定胜负，{team}[惊险|艰难]过关"], leads=[
    "{weekday}晚，[在{venue}进行的比赛中|{venue}座无虚席]，{team}以{s1}比{s2}战胜{team2}，现场{big}名观众见证了这场胜利。", "[凭借|依靠]{athlete}在[最后时刻|下半场]的[出色发挥|关键进球|精彩表现]，{team}以{s1}比{s2}[险胜|战胜]{team2}。",
    "{team}{weekday}在{venue}以{s1}比{s2}击败{team2}，[取得{n}连胜|取得赛季第{n2}场胜利]。"], body=[
    "{athlete}全场[梅开二度|贡献一球一助攻|打进一粒精彩的远射]，赛后[当选全场最佳球员|获得了全场最高评分]。", "主教练{coach}赛后[表示|称赞]，[球队|队员们]这一周[重点演练了|一直在练习][定位球|防守转换|比赛末段的处理]，[效果明显|收到了成效]。",
    "上半场{team2}[一度领先|占据主动]，但[下半场|最后阶段][体能下降|失误增多]，最终被对手[逆转|反超]。", "比赛的转折点出现在第{mm}分钟，{athlete}[抢断得手|突破造成犯规|远射破门]，[点燃了|彻底点燃了]全场气氛。",
    "{team2}[近期伤病不断|赛程密集]，本场有{n}名主力[因伤缺阵|轮休]，[阵容深度|替补实力]受到考验。", "本赛季{venue}的上座率同比[提高了|增长了]{pct}%，[说明|显示出][本地球迷的热情很高|球队重建初见成效]。",
    "[下一轮|接下来]，{team}将[客场挑战|主场迎战]来自{city2}的对手，比赛定于{weekday2}晚{evehr}点[开始|打响]。", "“[我们一直保持耐心|没有人放弃|大家始终相信自己]，”{athlete}赛后说，“[这就是强队该有的样子|我们知道机会一定会来|感谢现场球迷的支持]。”",
    "俱乐部[表示|透露]，[季后赛门票|下赛季套票]的[价格|发售时间]将于{month}公布。", "门将{person3}全场[做出|贡献了]{n}次[关键扑救|精彩扑救]，[补时阶段|最后时刻]的一次[飞身扑救|神勇扑救][保住了胜果|帮助球队守住了领先优势]。",
    "[这场胜利|赢下这场比赛]后，{team}[升至积分榜第二位|跻身前四|在榜首领先第二名三分]，距离赛季结束还有{n}轮。", "[上半场结束前|下半场开始不久|补时阶段]，[一次点球判罚|一粒越位进球|一张红牌]引发了[争议|双方球员的争执]，[主裁判|裁判组]经过视频回看后[维持了原判|改判]。"])
T["zh"]["technology"] = dict(titles=["{company}[发布|推出]{product}，[续航大幅提升|主打轻薄|售价{price}元起]", "{company}押注{product}，[能否打开市场|想要挽回用户|剑指年轻用户]", "{company}新品{product}[下月开售|即将上市|开启预约]"], leads=[
    "{weekday}，{company}正式发布了{product}，[官方称|据介绍]新品[能耗降低了{pct}%|只需{n}分钟即可完成设置|支持离线使用]。", "{company}{weekday}在{city}举行发布会，推出了{product}，这是该公司{n}年来[首款新品|最重要的一次发布]。",
    "[外界认为|业内人士分析]，{weekday}发布的{product}被{company}寄予厚望，公司希望借此[挽回用户|打开海外市场|与大厂正面竞争]。"], body=[
    "公司首席技术官{expert}介绍，[新芯片|新系统|这项设计]由[内部团队|{n2}人的团队]历时{n}年[研发完成|打磨而成]。", "[首批体验者|参与内测的用户][普遍认为|大多表示][界面简洁|运行流畅|续航扎实]，但也有人[吐槽|质疑][价格偏高|接口太少|隐私设置不够透明]。",
    "{finorg}的分析师[预计|估计]，[智能设备|便携电子产品|消费电子]市场[未来几年|到{yearn}年前]将保持每年{pct}%左右的增长。", "新品[起售价|标准版售价]为{price}元，将于{month}[开始发货|正式开售|开启预售]。",
    "也有[消费者组织|业内人士][提醒|指出]，[用户数据|语音记录|位置信息]如何存储和使用，[仍需|还需要]进一步说明。", "[消息公布后|受此消息影响]，{company}股价[上涨|下跌]{pct2}%。", "新品重{weight}克，提供[三种配色|两种尺寸|黑白两色]，[更高配置的版本|Pro版本]预计{month}上市。", "新品将由位于{city2}的[合作工厂|自有工厂]生产，[该工厂|工厂目前]有员工{n2}0余人。",
    "[环保组织|一些消费者]注意到，新品包装使用了{pct}%的再生材料，但也[希望|呼吁]公司[延长系统更新年限|推出官方维修服务]。", "与新品同步上线的[配套App|系统更新]还加入了[离线地图|家庭共享|用电报告]等功能。", "[业内人士|分析人士]指出，{company}[近年来|过去一年][面临|承受着][激烈的市场竞争|销量下滑的压力|来自投资者的压力]，这款新品[被寄予厚望|至关重要]。"])
T["zh"]["cooking"] = dict(titles=["[在家也能做|零失败|十分钟搞定]的{dish}，[关键在这一步|做法其实很简单|比饭店还香]", "[大厨|{chef}师傅]教你做{dish}：[{ingredient}是灵魂|火候最重要]", "[周末|家常|下饭]菜推荐：{dish}[这样做更入味|一学就会]"], leads=[
    "{dish}是[很多家庭|不少人][餐桌上的常客|从小吃到大的家常菜]，今天[请来|邀请]{chef}师傅[分享|介绍][一个简单的做法|家里的独门做法]。", "[天气转凉|工作日下班后|周末在家]，[不妨|可以]试试{dish}，[从备料到出锅|全程]只需{n2}分钟左右，[够{n}个人吃|分量刚好]。",
    "[想做好|要做出好吃的]{dish}，{chef}师傅[认为|说][关键在于|秘诀就是]{ingredient}[的用量|放的时机]。"], body=[
    "[挑选食材时|去菜场采购时][尽量|最好][选新鲜的|去早市买]，按照{chef}师傅的经验，[原料新鲜|食材好了]，[菜就成功了一半|味道差不了]。", "[先|首先]把锅烧热，倒入{n}勺油，[油温六成热时|待油微微冒烟后]放入葱姜蒜[爆香|炒出香味]。",
    "[加入|倒入]{ingredient}和少许清水，[转小火|盖上锅盖][慢慢炖|焖]{n2}分钟左右，[中间翻动一两次|注意不要糊锅]。", "[这一步不能着急|千万别心急]，[小火慢炒|耐心收汁]才能[让味道更浓郁|把香味逼出来]。",
    "[如果家里没有|买不到]{ingredient}，也可以用{ingredient2}[代替|替换]，[味道差别不大|风味略有不同]。", "出锅前[撒上|加入][葱花|香菜|白芝麻]，[再淋少许香油|翻炒均匀]即可[装盘|出锅]。",
    "[吃不完的|剩下的]{dish}[放进冰箱冷藏|密封保存]，可以保存{n}天左右，[第二天加热后|回锅后]味道[依然不错|更入味]。", "[搭配|配上][一碗白米饭|一碗杂粮粥|两个馒头]，[就是|便是][一顿简单又满足的晚饭|孩子最爱的一餐]。",
    "{chef}师傅在{city}[经营着一家小饭馆|开设烹饪课]，[常说|常跟学员说]，做菜[最重要的是|关键在于][边做边尝|掌握火候|食材新鲜]。", "[按照|根据][食谱|营养师的]估算，每份{dish}[大约|约]含{cal}千卡热量、{n2}克蛋白质。"])
T["zh"]["travel"] = dict(titles=["[三天两夜|五天慢游|一个周末]玩转{dest}，[这份攻略请收好|避坑指南来了|本地人推荐路线]", "{dest}[迎来客流高峰|游客数量创新高|新线路开通]", "[带娃|穷游|淡季]去{dest}，[怎么玩最划算|需要注意什么]"], leads=[
    "[以前|过去]从{city}去{dest}[要花一整天|需要转两次车]，[如今|现在]随着[高铁|新航线|旅游专线]开通，[全程|路上]只需{n}个小时。", "[清晨是游览{dest}的最佳时段，旅行团还没到|傍晚是感受{dest}的最佳时段，一日游游客已经离开]，四周格外安静。",
    "[据当地文旅部门统计|当地旅游部门介绍]，{yearp}年{dest}接待游客[同比增长|增长了]{pct}%，[给当地交通和住宿带来不小压力|也带动了周边村镇的发展]。"], body=[
    "[古城内|景区附近]的[民宿|客栈]标准间[每晚|一晚]{price2}0元起，[含早餐|住三晚以上可打折]。", "[登山步道|环湖绿道]全长约{n}公里，[爬升|落差]{n2}0米，[普通游客|一般人]走完需要{n}小时左右。",
    "{month}[正值|赶上][旺季|假期|花期]，[酒店|餐馆][往往|经常][一房难求|需要排队]，[建议|最好]提前[预订|安排]。", "当地[向导|导游]{guide}建议，中午[尽量避开|不要去][主广场|热门观景台]，[可以|不妨]去[附近的小渔村|山腰的老村落|本地人逛的菜市场]走走。",
    "[景区观光车|公交]每{n2}分钟一班，[一日通票|单程票]{price2}元。", "[来这里一定要尝尝|当地的特色美食是][烤乳扇|酸汤鱼|手抓饭|烤饼|米线]，[通常|一般]搭配[本地茶|米酒|酸菜]一起吃。", "[山里早晚温差大|路面湿滑|部分地方信号不好]，[建议|游客最好][带件外套|穿防滑鞋|提前下载离线地图]。", "[一些|部分][村民|店主][欢迎|担心]游客增多，[他们|有人]说[房租涨了|旅游季变长了|停车越来越难]。",
    "[从{month}起|今年起]，当地将[收取|征收]每人{price2}元的[生态维护费|景区管理费]，用于[步道修缮|垃圾清运|公厕建设]。", "除了主要景点，[周边|附近]的[小村落|古村|山谷]也值得[花半天时间|专门][走一走|逛一逛]，[游客少|人少景美]，[很有生活气息|适合拍照]。"])
T["zh"]["finance"] = dict(titles=["[A股|三大指数]{zh_edge}，{sector}{zh_lead}", "{company}业绩{zh_beat}", "[央行议息会议|就业数据公布|长假]前夕，A股{zh_edge}"], leads=[
    "{weekday}，A股三大指数{zh_close}，[沪指|主要指数]{zh_ud}{pct2}%，{sector}{zh_led}。", "{company}[发布|公布]的财报显示，公司[本季度|上季度]实现营收{bill}亿元，{zh_hl}市场预期的{bill2}亿元，{zh_drive}。",
    "{weekday}，[受最新通胀数据影响|受央行官员讲话影响|在一批上市公司财报的影响下]，投资者情绪[明显转向谨慎|有所回暖]，{sector}[波动最大|成为市场焦点]。"], body=[
    "[债券市场方面|债市方面]，[2|5|10]年期国债收益率[小幅上行|下行|基本持平]，[报|收于]{rate}%。", "{finorg}首席经济学家{expert}认为，[市场|投资者]正在等待[下周公布的就业数据|央行的政策信号|消费数据]。",
    "[板块方面|从板块看]，{sector}整体{zh_sect}。", "{company}[同时|还][上调了全年业绩预期，理由是需求旺盛|下调了全年业绩指引，原因包括成本上升|维持了全年业绩预期不变]。",
    "[国际油价|布伦特原油][上涨|下跌]{pct2}%，[金价|黄金价格]则[小幅走高|有所回落]。", "[两市|沪深两市][成交额|全天成交]约{bill3}亿元，[较前一交易日|比上周][放大|缩小]。",
    "[今年以来|{month}以来]，不少[普通投资者|年轻人]把资金[转向|投向][指数基金|高股息股票|短期理财产品]。", "{expert}[提醒|建议]，[短期|近期]市场波动[难以避免|较大]，[普通投资者|长期投资者][不必|不宜][追涨杀跌|过度关注每日涨跌]。",
    "[人民币汇率|在岸人民币][小幅升值|小幅贬值|基本稳定]，[收盘|截至收盘]报{fx}。", "[另外|此外]，{finorg}数据显示，[首套房贷利率|一年期存款利率]已[降至|升至]{rate}%。"])
T["zh"]["local"] = dict(titles=["{city}{facility}[改造方案|建设计划][获批|公示|征求意见]", "{street}[将封闭施工|要改造了]，[附近居民|周边商户]怎么看", "{district}{facility}项目[下月开工|即将动工|年内开建]"], leads=[
    "{weekday}，{city}市[相关部门|政府常务会议][审议通过|批准]了{district}{facility}[改造|新建]项目，总投资约{wan}万元。", "[围绕|关于]{street}[改造|拓宽]及配套{facility}建设方案，{district}{weekday}晚召开居民[座谈会|听证会]，[近|约]{n2}0名居民到场发表意见。",
    "{city}市[住建部门|相关部门]{weekday}[确认|透露]，位于{district}{street}[旁|附近]的{facility}项目将于{month}[正式开工|动工建设]。"], body=[
    "[街道|社区]负责人{person2}介绍，[这个|该]{facility}项目[已经酝酿了|讨论了]{n}年，建成后[将惠及|可以服务][周边上万户居民|附近几个社区]。", "[按照计划|据介绍]，工程[将于|预计]{month}[开工|动工]，工期约{n}个月，[具体以实际情况为准|如遇雨天将顺延]。",
    "[部分|一些]沿街商户[担心|表示]，[施工期间|改造期间][停车位减少|人流下降]，[生意可能受到影响|营业额恐怕会下滑]。", "[规划部门|相关负责人]介绍，[项目所在地块|原有建筑][建于|始建于]{oldyear}年，[已经闲置了|因安全检查不合格关闭了]{n}年。",
    "[目前|截至目前]，[支持|反对]该方案的[线上联名|居民签名]已[超过|达到]{big}人。", "[有关部门|街道办]将于{weekday2}在[社区活动中心|街道办事处][召开|举办]说明会，[欢迎|邀请]居民[参加|提出建议]。", "[施工期间|改造期间]，途经该路段的{n2}路等[公交线路|公交车]将[临时绕行|调整站点]。", "交警部门提醒，[过往车辆请减速慢行|驾驶员请按照指示牌绕行]，[尽量避开|错开]早晚高峰。",
    "[根据方案|项目方案显示]，[改造内容|新建设施]还[包括|涵盖][增设路灯|无障碍通道|口袋公园|非机动车停放区]等。", "对于{street}沿线的[老树|行道树]，方案[提出|明确][全部保留|移栽后补种{n2}棵新树]，这也是附近居民在[征求意见时|座谈会上]最关心的问题之一。"])
T["zh"]["science"] = dict(titles=["[重大发现|新发现]！{uni}[团队|研究人员]发现{finding}", "[研究|最新研究]：{finding}或[有助于|能够帮助]解释{why}", "{uni}科研团队[历时{n}年|首次][揭示|发现]{finding}"], leads=[
    "{uni}{field}团队[近日|日前]在[国际学术期刊|一份学术期刊]上发表论文，[报告了|描述了]{finding}。", "[经过|历时]{n}年的[野外考察|观测|实验室研究]，{uni}研究人员[终于|首次]发现了{finding}。", "[研究人员认为|专家表示]，{uni}团队发现的{finding}[或许|可能]有助于解释{why}。"], body=[
    "研究团队[在|先后在]{n2}个[采样点|观测点|实验组]共[采集|分析]了{big}份[样本|图像|数据]。", "“[我们完全没想到|这个结果出乎意料|说实话一开始我们也不敢相信]，”论文第一作者{expert}说，“[信号如此清晰|差异会这么明显]。”",
    "[未参与该研究的|业内]专家{expert2}[提醒|指出]，[这一结果|相关结论][还需要|仍有待][其他团队|更多独立研究][重复验证|进一步验证]。", "该项目[得到了|获得]{org}和[国家自然科学基金|地方科研专项]的资助。",
    "[此前|过去]已有研究[推测|暗示]存在类似现象，但[由于样本不足|受限于观测条件]，[一直未能证实|始终缺乏直接证据]。", "团队[借助|使用][自主研制的设备|新的分析方法|改进后的仪器]，[检测到|测量到]了仅{pct2}%的细微变化。", "[下一步|接下来]，研究人员[计划|打算][扩大样本规模|在更多地点开展研究|延长观测时间]。", "{expert}表示，这项发现[未来|将来][可能|有望]为{use}提供[参考|新思路]。",
    "论文共有{n2}位作者，来自{n}[个国家|家机构]，[全文已公开|目前可免费下载]。", "团队中有{n}名[研究生|博士生]，[他们|大家][轮流|分组][驻守现场|通宵处理数据]，前后持续了{n2}[个月|周]。"])
T["zh"]["review"] = dict(titles=["{product}评测：[表现稳定但价格偏高|升级明显|几乎没有短板|够用就好]", "[上手体验|深度测评|用了{n}周]：{product}[值得买吗|到底怎么样]", "{price}元[值不值|买得值吗]？{product}[全面测试|真实体验]"], leads=[
    "[我们用|笔者用]{product}[体验了|测试了]{n}周，[总的来说|一句话总结]，[它大部分场景都表现不错|值得推荐|离完美只差一点]。", "{product}售价{price}元，[定位|处于][同类产品的中档|中高端市场]，[主打|宣传重点是][更长的续航|更快的充电速度|更清晰的屏幕]。", "{product}的包装[很紧凑|采用环保材料|比想象中大]，盒内除了主机，[只有|还有][一根充电线|一份说明书|一个收纳袋]。"], body=[
    "[机身做工|整体质感][扎实|不错|略显廉价]，重量{weight}克，[单手握持很舒服|携带方便|比看上去要沉一些]。", "[在我们的测试中|实测下来]，续航[平均|大约]{n2}小时，[略高于|略低于|基本符合]官方宣传。", "随机附送的充电器功率为{watt}瓦，[从零充满|充满电]约需{n}0分钟。", "[首次设置|配对]大约需要{n}分钟，[需要下载配套App|按照屏幕提示即可完成]，[不过|但]App[索要的权限偏多|要求注册账号]。",
    "[最大的缺点是|让人不满意的地方是|美中不足的是][高负载时风扇噪音明显|亮面外壳容易沾指纹|系统更新不够及时]。", "[与上一代相比|和同价位竞品相比]，它在[日常使用|实际体验]中[明显更快|更安静|更细腻]。", "官方提供[1|2|3]年保修，[在同类产品中|就这个价位而言][算是厚道|属于常规水平|略显不足]。", "[综合评分|我们的评分]：{score}分（满分10分），[适合|推荐给][学生党|小户型家庭|经常出差的人|准备换机的老用户]。",
    "{month}推送的[固件更新|系统更新][修复了|改善了][早期出现的断连问题|亮度调节问题|电量显示不准的问题]。", "[如果不着急|预算有限的话]，可以[等等促销|关注电商大促]，[届时|通常][价格会下调|能便宜]{pct}%左右。"])
T["zh"]["education"] = dict(titles=["{school}[开设|推出|试点]{subject}[特色课程|兴趣班|课后服务]", "{school}{subject}课[受追捧|一位难求|报名火爆]", "{school}[扩大|推广]{subject}课程，[覆盖更多年级|惠及更多学生]"], leads=[
    "从{month}起，{school}的学生[可以|将能够]在[课后|午休时间][参加|选修]新开设的{subject}[课程|兴趣班]，[费用由|经费来自]{org}[承担|支持]。", "{school}新开设的{subject}[兴趣班|课程]已有{n2}0多名学生报名，[学校方面表示|校方坦言]，报名人数[远超预期|超出了计划名额]。",
    "{school}[将把|计划把]{subject}[课程|兴趣班]扩大到[低年级|全部年级]，原因是去年的试点[效果不错|反响热烈]。"], body=[
    "校长{person2}介绍，[近几年|过去{n}年]，[报名人数|学生兴趣][翻了一番|逐年增加]，[名额|报名表][往往|经常]几天内就被抢光。", "[参与授课的|任课]老师[在暑假期间|开课前]接受了{n2}小时的[专业培训|集中培训]，[费用由专项资金承担|经费来自区教育局]。",
    "[不少|一些]家长对此[表示欢迎|存在顾虑]，认为这[会|可能][打乱家庭作息|影响接送安排|让孩子更有兴趣]。", "[学校|教研组]援引的研究显示，[动手实践的|项目式的]{subject}[课程|学习][有助于|能够][提高出勤率|增强学生自信心|提升综合成绩]。",
    "[目前|现在]，[这门课程|该项目]已有{n2}0名学生参加，其中约{pct}%[此前|以前][从未接触过|没有学过]{subject}。", "[往届|以往参加过的]学生[后来|有的][考入了理工科院校|获得了奖学金|还自己创办了小工作室]。",
    "“[孩子们|同学们][给了我们很多惊喜|真的非常努力]，”带队老师{person3}说，[今年|去年]兴趣班的学生在[全市|全省]{subject}比赛中[获得了二等奖|拿到了第三名]。", "[据估算|按照预算]，[该项目|这门课程]每年[需要|投入]约{wan}万元。",
    "家长和市民可在{month}底前[通过|登录][教育局官网|学校公众号][提交意见|参与问卷调查]。", "课程[每周两次|每周三下午|每个工作日放学后]在学校的[图书馆|科学实验室|旧体育馆]进行，[所需设备|电脑等器材]由{company}[捐赠|借用]。"])

# ----------------------------------------------------------------- generation
ALT = re.compile(r"\[([^\[\]]*)\]")
FAMILY = {"weather": "C", "local": "C", "education": "C", "cooking": "F", "review": "F", "sports": "B",
          "technology": "B", "finance": "B", "science": "B", "travel": "B"}


def expand(rng, tpl, ctx, lang):
    """Pick alternatives, then fill slots from ctx + fresh per-sentence numbers."""
    s = ALT.sub(lambda m: rng.choice(m.group(1).split("|")), tpl)
    d = dict(ctx)
    d.update(fresh(rng, lang, ctx))
    s = s.format_map(d)
    if lang == "en" and s[:1].islower():
        s = s[0].upper() + s[1:]
    return s


def fresh(rng, lang, ctx):
    w = ctx["weekday_list"]
    wd2 = rng.choice([x for x in w if x != ctx["weekday"]])
    return dict(n=rng.randint(2, 9), n2=rng.randint(12, 58), pct=f"{rng.uniform(2, 38):.1f}",
                pct2=f"{rng.uniform(0.2, 4.8):.1f}", watt=rng.choice([18, 20, 30, 45, 65, 100]),
                rain=rng.randint(12, 140), wind=rng.randint(65, 120), windb=rng.randint(8, 11), year=rng.randint(2009, 2023),
                yearp=rng.choice([2024, 2025]), yearn=rng.randint(2027, 2030), weekday2=wd2,
                month=rng.choice(EN["month"]) if lang == "en" else f"{rng.randint(1, 12)}月",
                hour=rng.randint(6, 22), minute=f"{rng.randint(0, 59):02d}", evehr=rng.randint(6, 8),
                big=(f"{rng.randint(150, 9800):,}" if lang == "en" else rng.randint(150, 9800)),
                price2=(f"${rng.randint(3, 25)}" if lang == "en" else rng.randint(5, 60)),
                bill3=f"{rng.uniform(3, 12):.1f}" if lang == "en" else rng.randint(6000, 14000),
                rate=f"{rng.uniform(2.1, 7.4):.2f}", fx=f"7.{rng.randint(0, 3000):04d}",
                oldyear=rng.randint(1958, 1995), cal=rng.randint(280, 780), oven=rng.choice(range(170, 240, 10)),
                weight=rng.randint(150, 900), mm=rng.randint(55, 89), oilp=f"${rng.uniform(58, 96):.2f}",
                goldp=f"${rng.randint(2300, 3400):,}", money=f"${rng.randint(40, 900) * 1000:,}")


class Names:
    """The person names used so far, none used twice. A name of form 0 is a first and a last
    name (a surname and a given name); once all of them are used (N_BASE > ~60), form f adds
    f middle initials (f extra given characters), so that a free name always exists."""

    def __init__(self):
        self.used, self.count = set(), Counter()

    @staticmethod
    def pool(lang, form):
        if lang == "en":
            return len(EN["first"]) * len(EN["last"]) * 26 ** form
        return len(ZH["sur"]) * len(ZH["given"]) * len(ZH_EXTRA) ** form

    def new(self, rng, lang):
        form = 0
        while self.count[lang, form] >= self.pool(lang, form):
            form += 1
        while True:
            if lang == "en":
                first, last = rng.choice(EN["first"]), rng.choice(EN["last"])
                nm = " ".join([first] + [chr(65 + rng.randrange(26)) + "." for _ in range(form)] + [last])
            else:
                nm = rng.choice(ZH["sur"]) + rng.choice(ZH["given"]) + "".join(rng.choice(ZH_EXTRA) for _ in range(form))
            if nm not in self.used:
                self.used.add(nm)
                self.count[lang, form] += 1
                return nm


ZH_EXTRA = list("伟芳娜敏静磊洋勇艳杰军强丽明涛超霞平刚")


def make_context(rng, lang, topic, names):
    P = EN if lang == "en" else ZH

    def name():
        return names.new(rng, lang)
    c = {k: name() for k in ["person2", "person3", "person4", "expert", "expert2", "coach", "athlete", "chef",
                             "guide", "reporter", "resident", "analyst", "official"]}
    c["city"], c["city2"] = rng.sample(P["city"], 2)
    for k in ["district", "street", "facility", "company", "product", "dish", "dest", "sector", "subject",
              "weekday"]:
        c[k] = rng.choice(P[k])
    c["ingredient"], c["ingredient2"] = rng.sample(P["ingredient"], 2)
    c["field"], c["finding"], c["why"], c["use"] = rng.choice(P["sci"])
    # weather kind (0 rain, 1 cold, 2 wind, 3 heat) drives the headline, the temperatures and tagged sentences
    c["kind"] = rng.randrange(4) if topic == "weather" else 0
    c["wx"], c["wxw"] = P["wx"][c["kind"]]
    c["hi"] = rng.randint(*[(12, 24), (-4, 6), (8, 20), (33, 39)][c["kind"]])
    c["lo"] = c["hi"] - rng.randint(5, 10)
    c["cn"], c["buyobj"] = rng.choice(ZH["cn"]), "食材" if topic == "cooking" else "产品"
    for k in ["venue", "org", "finorg", "uni", "school"]:
        c[k] = rng.choice(P[k]).format(**c)
    c["weekday_list"], up = P["weekday"], rng.random() < 0.5  # market direction, kept consistent
    c.update(dict(zip(["updown", "ledby", "edge", "sectmove", "strongweak", "zh_close", "zh_ud", "zh_led", "zh_edge",
                       "zh_lead"], ["higher", "led by gains", "edge higher", "gained", "strongest", "集体收涨", "涨",
                                    "表现抢眼", "震荡走高", "领涨"] if up else
                      ["lower", "dragged down by losses", "slip", "dropped", "weakest", "全线收跌", "跌", "拖累大盘",
                       "小幅回落", "领跌"])))
    c.update(dict(zip(["liftw", "rally", "abovebelow", "zh_hl", "zh_beat", "zh_drive"],
                      ["lift", "rally", "above", "高于", f"超预期，{c['sector']}集体走强", f"带动{c['sector']}走强"] if up else
                      ["weigh on", "slide", "below", "低于", f"不及预期，{c['sector']}应声下跌", f"拖累{c['sector']}走弱"])))
    c["zh_sect"] = (f"上涨{rng.uniform(0.5, 4):.1f}%，为近{rng.randint(2, 9)}周以来最好表现" if up
                    else f"下跌{rng.uniform(0.5, 4):.1f}%，为近{rng.randint(2, 9)}周以来最差表现")
    c["s1"] = rng.randint(1, 4)
    c["s2"] = c["s1"] - rng.randint(1, min(2, c["s1"]))
    if lang == "en":
        c["team"] = f"the {c['city']} {rng.choice(P['mascot'])}"
        c["team2"] = f"the {c['city2']} {rng.choice([m for m in P['mascot'] if m not in c['team']])}"
        c["price"] = f"${rng.randint(5, 199) * 10 - 1:,}"
        b1 = rng.uniform(1.5, 40)
        c["bill"], c["bill2"] = f"${b1:.1f}", f"${b1 * (1 + rng.uniform(0.04, 0.15) * (-1 if up else 1)):.1f}"
        c["quarter"], c["index"] = rng.choice(P["quarter"]), rng.choice(P["index"])
        c["mill"] = f"${rng.uniform(1.5, 48):.1f}"
        a = rng.randint(5, 8)
        c["votes"] = f"{a}-{9 - a}"
    else:
        c["team"] = f"{c['city']}{rng.choice(P['mascot'])}队"
        c["team2"] = f"{c['city2']}{rng.choice([m for m in P['mascot'] if m not in c['team']])}队"
        c["price"] = rng.randint(5, 99) * 100 - 1
        b1 = rng.uniform(12, 900)
        c["bill"], c["bill2"] = f"{b1:.1f}", f"{b1 * (1 + rng.uniform(0.04, 0.15) * (-1 if up else 1)):.1f}"
        c["wan"] = rng.randint(3, 95) * 100
    c["score"] = f"{rng.randint(11, 19) / 2:.1f}".rstrip("0").rstrip(".")
    return c


def build_article(rng, lang, topic, ctx, seen, repeats=False):
    """A title and paragraphs, and the sentences they used; None when too few distinct
    sentences are left (a large corpus) unless `repeats` lets sentences of earlier articles
    be used again."""
    bank, gen, local = T[lang][topic], GEN[lang], set()

    def unique(tpl):  # no sentence may repeat verbatim anywhere in the corpus (while it is small)
        for _ in range(30):
            s = expand(rng, tpl, ctx, lang)
            if s not in seen and s not in local:
                local.add(s)
                return s
        return None

    def numbered(s):  # a large corpus (N_BASE > ~250) runs out of distinct titles: number them
        k = 2
        while f"{s} ({k})" in seen or f"{s} ({k})" in local:
            k += 1
        local.add(f"{s} ({k})")
        return f"{s} ({k})"
    ctx["title_tpl"] = rng.randrange(len(bank["titles"]))
    title = unique(bank["titles"][ctx["title_tpl"]]) or numbered(expand(rng, bank["titles"][ctx["title_tpl"]], ctx, lang))
    fam, kind = FAMILY[topic], f"k{ctx['kind']}"
    ok = lambda t: not t.startswith("<") or fam in t[1:t.index(">")].split(",") or kind in t.split(">")[0]
    body = [t for t in bank["body"] if ok(t)]
    mids = [t for t in gen["mid"] if ok(t)]
    # topic sentences keep their (roughly narrative) bank order; generic ones are slotted in at random
    body = [body[j] for j in sorted(rng.sample(range(len(body)), min(len(body), rng.randint(8, 9))))]
    for g in rng.sample(mids, rng.randint(2, 3)):
        body.insert(rng.randint(1, len(body)), g)
    tpls = [rng.choice(bank["leads"])] + body + [rng.choice([t for t in gen["end"] if ok(t)])]
    tpls = [re.sub(r"^<[^>]*>", "", t) for t in tpls]
    sents = [unique(t) for t in tpls]
    if repeats:
        sents = [s if s is not None else expand(rng, t, ctx, lang) for s, t in zip(sents, tpls)]
    sents = [s for s in sents if s]
    if len(sents) < 7:
        return None
    # split into 3-5 paragraphs; the lead paragraph has 1-2 sentences
    cuts = sorted({rng.choice([1, 2])} | set(rng.sample(range(3, len(sents)), rng.randint(2, 4))))
    paras, prev = [], 0
    for c in cuts + [len(sents)]:
        paras.append((" " if lang == "en" else "").join(sents[prev:c]))
        prev = c
    return title, paras, local


def meta_line(lang, when, views):
    if lang == "en":
        return f"Posted {when:%Y-%m-%d %H:%M} · {views:,} views"
    return f"发布时间：{when:%Y-%m-%d %H:%M} 阅读：{views:,}"


SYN = {"en": [("said", "noted"), ("roughly", "approximately"), ("nearly", "almost"), ("residents", "locals"),
              ("expected", "anticipated"), ("praised", "commended")],
       "zh": [("目前", "眼下"), ("已经", "已"), ("大约", "约"), ("市民", "居民"), ("提醒", "提示"), ("附近", "周边"),
              ("通常", "一般")]}
NAV = {"en": ["Home | News | Sports", "Home | News | Local | Business | Tech", "Home > News > Article"],
       "zh": ["首页 | 新闻 | 体育 | 财经", "首页 > 新闻中心 > 正文", "首页 | 本地 | 科技 | 教育 | 生活"]}
FOOT = {"en": ["Share this: Facebook Twitter Email", "© 2026 Example News. All rights reserved.",
               "Sign up for our morning newsletter."],
        "zh": ["分享到：微信 微博 QQ空间", "版权所有 © 2026 某某网", "© 2026 示例新闻网 版权所有"]}
SRC = {"en": ["The Example Times", "The Sample Herald", "Example Wire", "The Demo Gazette"],
       "zh": ["示例日报", "晨曦都市报", "云帆晚报", "样本新闻网"]}
TITLE_PREFIX = {"en": ["BREAKING: ", "UPDATE: ", "Reposted: ", "EXCLUSIVE: "],
                "zh": ["转载：", "【独家】", "【关注】", "【快讯】"]}
TITLE_SUFFIX = {"en": [" (Photos)", " | Example News", " — Video"], "zh": ["（图）", "（附视频）", " | 示例新闻网"]}
HOSTS = ["example.org", "example.net", "mirror.example.com", "www.example.org", "news.example.net",
         "m.example.com", "blog.example.org", "archive.example.net"]


def make_variant(rng, lang, base, changes, ctx):
    title, lines = base["title"], base["text"].split("\n")
    meta, paras = lines[0], lines[1:]
    head, tail = [], []
    if "tiny_edit" in changes:
        done = False
        if rng.random() < 0.5:  # one-word substitution
            for a, b in rng.sample(SYN[lang], len(SYN[lang])):
                pat = re.compile(rf"\b{a}\b") if lang == "en" else re.compile(a)
                hits = [i for i, p in enumerate(paras) if pat.search(p)]
                if hits:
                    i = rng.choice(hits)
                    paras[i], done = pat.sub(b, paras[i], count=1), True
                    break
        if not done:  # delete one short sentence from a multi-sentence paragraph
            splitter = r"(?<=[.!?])(?<!St\.)\s+(?=[A-Z\"])" if lang == "en" else r"(?<=[。！？])(?!”)"
            cand = [(i, s) for i, p in enumerate(paras)
                    for s in re.split(splitter, p) if len(s) >= (25 if lang == "en" else 12)
                    and len(re.split(splitter, p)) > 1]
            i, s = rng.choice(sorted(cand, key=lambda x: len(x[1]))[:3])
            ss = [x for x in re.split(splitter, paras[i]) if x and x != s]
            paras[i] = (" " if lang == "en" else "").join(ss)
    if "timestamp" in changes:
        when = ctx["when"] + timedelta(hours=rng.randint(1, 40), minutes=rng.randint(1, 59))
        meta = meta_line(lang, when, ctx["views"] + rng.randint(37, 25000))
    if "source" in changes:
        src = rng.choice(SRC[lang])
        if "title" in changes and rng.random() < 0.5:
            line = f"原标题：{base['title']}" if lang == "zh" else f"Originally published as \"{base['title']}\""
            head.append(line)
        elif lang == "zh":
            ed = rng.choice(ZH["sur"]) + rng.choice(ZH["given"])
            tail.append(rng.choice([f"来源：{src} 责任编辑：{ed}", f"本文转载自{src}，版权归原作者所有。"]))
        else:
            tail.append(rng.choice([f"Reposted from {src}", f"This article first appeared in {src}."]))
    bp = []
    if "boilerplate" in changes:
        mode = rng.choice(["head", "tail", "both"])
        if mode in ("head", "both"):
            bp.append(rng.choice(NAV[lang]))
            head.insert(0, bp[-1])
        if mode in ("tail", "both"):
            bp.extend(rng.sample(FOOT[lang], 1 if mode == "both" else rng.randint(1, 2)))
            tail.extend(bp[1:] if mode == "both" else bp)
        while len(bp) > 1 and sum(len(x) + 1 for x in bp) >= 0.1 * len(base["text"]):  # keep boilerplate < 10%
            drop = bp.pop()
            (tail if drop in tail else head).remove(drop)
    if "title" in changes:
        r = rng.random()
        if r < 0.45:
            title = rng.choice(TITLE_PREFIX[lang]) + title
        elif r < 0.7:
            title = title + rng.choice(TITLE_SUFFIX[lang])
        else:  # totally rephrased title built from another title template
            alts = [t for j, t in enumerate(T[lang][ctx["topic"]]["titles"]) if j != ctx["title_tpl"]]
            title = expand(rng, rng.choice(alts), ctx, lang)
    text = "\n".join(head + [meta] + paras + tail)
    return title, text, bp


def variant_url(rng, lang, host, when):
    return rng.choice([f"https://{host}/{lang}/{when:%Y/%m/%d}/{rng.randint(10000, 999999)}.html",
                       f"https://{host}/article/{rng.getrandbits(40):010x}",
                       f"https://{host}/news/{lang}-{rng.randint(1000, 99999)}?utm_source=share"])


def main():
    rng = random.Random(SEED)
    docs, seen, names = [], set(), Names()
    stats = Counter()
    change_counts = {"en": Counter(), "zh": Counter()}
    n_changes = Counter()
    topics = list(T["en"].keys())
    for lang in ["zh", "en"]:
        plan = (VARIANT_PLAN * -(-N_BASE // len(VARIANT_PLAN)))[:N_BASE]
        rng.shuffle(plan)
        for i in range(1, N_BASE + 1):
            topic = topics[(i - 1) % len(topics)]
            ctx = make_context(rng, lang, topic, names)
            ctx["topic"] = topic
            ctx["when"] = datetime(2026, 1, 5, 7, 0) + timedelta(minutes=rng.randint(0, 80 * 24 * 60))
            ctx["views"] = rng.randint(120, 48000)
            for attempt in range(50):  # regenerate until the length is in range
                # A large corpus (N_BASE > ~250) runs out of distinct sentences: after 10
                # tries, sentences of earlier articles may be used again.
                article = build_article(rng, lang, topic, ctx, seen, repeats=attempt >= 10)
                if article is None:
                    continue
                title, paras, local = article
                body = "\n".join(paras)
                size = len(body.split()) if lang == "en" else len(re.sub(r"\s", "", body))
                lo, hi = (150, 600) if lang == "en" else (300, 1200)
                if lo <= size <= hi:
                    break
            else:
                raise SystemExit(f"could not hit length range for {lang}-{i}")
            seen |= local
            bid = f"{lang}-{i:04d}"
            base = {"id": bid, "title": title, "text": "\n".join([meta_line(lang, ctx["when"], ctx["views"])] + paras),
                    "url": f"https://news.example.com/{lang}/{i:04d}"}
            docs.append(base)
            stats[f"{lang}_bases"] += 1
            stats[f"{lang}_{'words' if lang == 'en' else 'chars'}"] += size
            hosts = rng.sample(HOSTS, plan[i - 1])
            used_combos = set()
            for v, host in enumerate(hosts, 1):
                while True:  # one or two change types; variants of one base use distinct combinations
                    k, ch = (1 if rng.random() < 0.6 else 2), set()
                    while len(ch) < k:
                        ch.add(rng.choices(list(CHANGE_WEIGHTS), weights=list(CHANGE_WEIGHTS.values()))[0])
                    if tuple(sorted(ch)) not in used_combos:
                        break
                used_combos.add(tuple(sorted(ch)))
                title_v, text_v, bp = make_variant(rng, lang, base, ch, ctx)
                bp_ratio = sum(len(x) + 1 for x in bp) / len(base["text"])
                assert bp_ratio < 0.1, (bid, bp_ratio)  # boilerplate stays < 10% of the text
                stats["max_bp_pct"] = max(stats["max_bp_pct"], round(100 * bp_ratio, 2))
                assert (title_v, text_v) != (base["title"], base["text"]), bid
                docs.append({"id": f"{bid}-v{v}", "title": title_v, "text": text_v,
                             "url": variant_url(rng, lang, host, ctx["when"])})
                stats[f"{lang}_variants"] += 1
                change_counts[lang].update(ch)
                n_changes[f"{lang}_{k}"] += 1
            if hosts:
                stats[f"{lang}_bases_with_variants"] += 1
    with open(OUT, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    # ------------------------------------------------------------- summary
    print(f"wrote {os.path.relpath(OUT)} ({os.path.getsize(OUT):,} bytes, seed {SEED})")
    print(f"{'':24}{'zh':>6}{'en':>6}{'total':>7}")
    rows = [("documents", lambda l: stats[f"{l}_bases"] + stats[f"{l}_variants"]),
            ("base articles", lambda l: stats[f"{l}_bases"]),
            ("bases with variants", lambda l: stats[f"{l}_bases_with_variants"]),
            ("variants", lambda l: stats[f"{l}_variants"]),
            ("variants, 1 change", lambda l: n_changes[f"{l}_1"]),
            ("variants, 2 changes", lambda l: n_changes[f"{l}_2"])]
    rows += [(f"change: {c}", (lambda c: lambda l: change_counts[l][c])(c)) for c in CHANGE_WEIGHTS]
    for label, fn in rows:
        print(f"{label:24}{fn('zh'):>6}{fn('en'):>6}{fn('zh') + fn('en'):>7}")
    print(f"max boilerplate share of a variant's text: {stats['max_bp_pct']}%")
    print(f"mean base length: zh {stats['zh_chars'] / N_BASE:.0f} chars, en {stats['en_words'] / N_BASE:.0f} words")


if __name__ == "__main__":
    main()
