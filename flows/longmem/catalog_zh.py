"""中文属性表：写给中文用户的事实（名字、地方、习惯都是中文世界的），不是英文表的翻译。

字段同 catalog_en：kind、attribute、question（提问的说法不同于证据里的说法）、topic（证据对话
的任务）、statement、terms（指向该属性的词，填充对话一个也不能用）、values。
"""

ATTRIBUTES = [
    {"key": "hometown", "kind": "user", "attribute": "用户的老家",
     "question": "我老家是哪儿的？", "topic": "春节回家的火车票怎么抢",
     "statement": "用户老家在{value}。", "terms": ["老家", "家乡"],
     "values": ["湖南衡阳", "四川绵阳", "山东潍坊", "福建泉州", "江西赣州", "黑龙江齐齐哈尔"]},
    {"key": "tea", "kind": "user", "attribute": "用户每天喝的茶",
     "question": "我平时最常喝什么茶？", "topic": "办公室下午犯困怎么提神",
     "statement": "用户每天喝{value}。", "terms": ["喝茶", "茶叶"],
     "values": ["西湖龙井", "安溪铁观音", "云南普洱", "福鼎白茶", "武夷岩茶"]},
    {"key": "square_dance", "kind": "user", "attribute": "用户母亲跳广场舞的地方",
     "question": "我妈每天晚上在哪儿跳广场舞？", "topic": "给爸妈挑一双适合运动的鞋",
     "statement": "用户的母亲每晚在{value}跳广场舞。", "terms": ["广场舞"],
     "values": ["人民公园", "小区门口的广场", "滨江步道", "文化宫门前", "体育馆外的空地"]},
    {"key": "dish_rec", "kind": "assistant", "attribute": "助手推荐的年夜饭菜",
     "question": "你上次推荐我年夜饭做哪道菜来着？", "topic": "准备年夜饭的菜单",
     "statement": "助手推荐了{value}。", "terms": ["年夜饭"],
     "values": ["松鼠桂鱼", "梅菜扣肉", "白切鸡", "四喜丸子", "油焖大虾"]},
    {"key": "app_rec", "kind": "assistant", "attribute": "助手推荐的记账方法",
     "question": "你之前建议我用什么方法记账？", "topic": "月底总是不知道钱花哪儿了",
     "statement": "助手建议用{value}记账。", "terms": ["记账"],
     "values": ["信封预算法", "每周复盘法", "三账户法", "零基预算法"]},
    {"key": "taste", "kind": "preference", "attribute": "用户的口味偏好",
     "question": "今晚吃什么好？给我出出主意。", "topic": "这周下班后做饭的安排",
     "statement": "用户偏爱{value}。", "terms": ["口味", "做饭", "吃饭"],
     "rubric": "用户希望晚饭建议符合其对{value}的偏好；不考虑这一点的泛泛推荐不是用户想要的。",
     "values": ["清淡的粤式家常菜", "重辣的湘菜", "少油少盐的蒸菜", "面食，尤其是手擀面"]},
    {"key": "trip_pref", "kind": "preference", "attribute": "用户的出游偏好",
     "question": "五一假期去哪儿玩比较好？", "topic": "比较几个小长假的出行方案",
     "statement": "用户偏爱{value}。", "terms": ["出游", "旅行", "假期"],
     "rubric": "用户希望出游建议围绕{value}；忽略这一点的推荐不是用户想要的。",
     "values": ["人少安静的古镇", "可以爬山的自然风景区", "坐高铁能到的周边城市", "带娃能玩的亲子农场"]},
    {"key": "courses", "kind": "count", "attribute": "用户报名的兴趣班",
     "question": "我一共报了几个兴趣班？", "topic": "业余时间怎么安排更合理",
     "statement": "用户报名了{value}。", "terms": ["兴趣班", "报名"],
     "values": ["书法班", "古筝班", "游泳班", "烘焙班", "摄影班", "太极拳班"]},
    {"key": "relatives", "kind": "count", "attribute": "用户拜访的亲戚",
     "question": "我这段时间一共去看望了几位亲戚？", "topic": "走亲戚该带什么礼物",
     "statement": "用户去看望了{value}。", "terms": ["亲戚", "看望"],
     "values": ["大姨", "二舅", "表姐", "姑姑", "外婆"]},
    {"key": "car", "kind": "update", "attribute": "用户开的车",
     "question": "我现在开的是什么车？", "topic": "车险续保怎么选",
     "statement": "用户开的是{value}。", "terms": ["开车", "车险", "汽车"],
     "values": ["比亚迪秦", "大众朗逸", "五菱宏光", "吉利帝豪", "丰田卡罗拉"]},
    {"key": "run_distance", "kind": "update", "attribute": "用户每次晨跑的距离",
     "question": "我现在每次晨跑跑多远？", "topic": "制定晨跑计划",
     "statement": "用户每次晨跑{value}。", "terms": ["晨跑", "跑步"],
     "values": ["三公里", "五公里", "八公里", "十公里"]},
    {"key": "move_party", "kind": "temporal", "attribute": "用户搬家和请客",
     "events": ["搬进了新家", "请同事来家里吃了暖房饭"],
     "question": "我搬进新家之后过了几天才请同事吃暖房饭？",
     "topic": "记一下最近的生活", "terms": ["搬家", "新家", "暖房"], "statement": "用户{value}。"},
    {"key": "exam_trip", "kind": "temporal", "attribute": "用户考驾照和自驾游",
     "events": ["通过了驾照科目三", "第一次自驾去了千岛湖"],
     "question": "从我考过科目三到第一次自驾去千岛湖，中间隔了几天？",
     "topic": "整理这阵子的开销", "terms": ["驾照", "科目三", "自驾", "千岛湖"], "statement": "用户{value}。"},
]

ABSENT = [
    {"key": "cat_name", "attribute": "用户家猫的名字", "question": "我家猫叫什么名字？", "terms": ["猫"]},
    {"key": "piano_teacher", "attribute": "用户的钢琴老师", "question": "我的钢琴老师姓什么？", "terms": ["钢琴"]},
    {"key": "fishing", "attribute": "用户常去钓鱼的水库", "question": "我平时去哪个水库钓鱼？", "terms": ["钓鱼", "水库"]},
]

ABSTAIN = "用户从未提到过{attribute}，根据聊天记录无法回答这个问题。"

FILLER_TOPICS = [
    "把一份蛋糕配方的用量换算成克", "给房东写一封礼貌的报修信息", "解释一下复利是怎么算的", "给网店起个名字",
    "修改表格里的求和公式", "学几种象棋开局", "潮汐是怎么形成的", "写一段生日贺卡上的祝福语",
    "整理家里共用的日程表", "比较两款笔记本电脑的屏幕", "概括一篇关于光伏发电的新闻", "练习面试时的自我介绍",
    "给走廊挑墙漆颜色", "策划一次桌游聚会", "学折纸鹤", "写一首关于秋天的小诗", "看懂水费账单",
    "设置密码管理工具", "翻译菜单上的一句话", "筹备学校的义卖活动",
]
